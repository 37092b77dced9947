"""The OpenFlow 1.3 learning switch that also prints each port status message it
receives: "port status REASON NUMBER NAME"."""
from os_ken.controller import ofp_event
from os_ken.controller.handler import MAIN_DISPATCHER, set_ev_cls

from learning_switch_13 import LearningSwitch13


class PortStatus13(LearningSwitch13):
    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    def port_status(self, ev):
        msg = ev.msg
        ofp = msg.datapath.ofproto
        reason = {
            ofp.OFPPR_ADD: "ADD",
            ofp.OFPPR_DELETE: "DELETE",
            ofp.OFPPR_MODIFY: "MODIFY",
        }.get(msg.reason, str(msg.reason))
        name = msg.desc.name
        if isinstance(name, bytes):
            name = name.decode()
        print("port status %s %d %s" % (reason, msg.desc.port_no, name), flush=True)
