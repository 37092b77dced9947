"""Starts os-ken applications through os_ken.base.app_manager (os-ken 4.x ships no
osken-manager command).

usage: run_app.py PORT APP_MODULE [APP_MODULE...]

Listens for switches on 127.0.0.1:PORT. Prints "listening" once the applications are
instantiated, then runs until killed.
"""
import os
import sys

os.environ.setdefault("OSKEN_HUB_TYPE", "eventlet")

from os_ken import cfg  # noqa: E402
from os_ken.base.app_manager import AppManager  # noqa: E402
from os_ken.lib import hub  # noqa: E402


def main():
    port = int(sys.argv[1])
    apps = sys.argv[2:]
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    cfg.CONF(args=[
        "--ofp-tcp-listen-port", str(port),
        "--ofp-listen-host", "127.0.0.1",
    ], project="os_ken")
    mgr = AppManager.get_instance()
    mgr.load_apps(apps + ["os_ken.controller.ofp_handler"])
    contexts = mgr.create_contexts()
    services = mgr.instantiate_apps(**contexts)
    print("listening", flush=True)
    try:
        hub.joinall(services)
    finally:
        mgr.close()


if __name__ == "__main__":
    main()
