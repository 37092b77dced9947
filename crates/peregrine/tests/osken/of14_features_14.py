"""OpenFlow 1.4 checked from os-ken over two connections of the same switch (two
--controller targets at this application's port): connection A is the first to be
ready, B the second. The switch must have been started with datapath id DPID,
two ports and the one flow STARTUP_FLOW.

Once both are ready, the checks run in order, each printed as "PASS NAME" or, on the
first that fails, "FAIL NAME: why" (and nothing more is checked); then "END".

- negotiation: both connections reached os-ken's main state at 1.4 (the only version
  it offers) and their features replies carry the switch's datapath id, DPID.
- port-desc, port-stats: 1.4 port descriptions and statistics, each port with its
  Ethernet property (each described port is also printed as "PORT NO NAME
  CURR_SPEED_KBPS HW_ADDR" for the test to compare with the interfaces).
- table-desc: one table description per table, the same tables as table stats.
- monitor-initial: A's flow monitor (INITIAL, ADD, REMOVED, MODIFY, INSTRUCTIONS,
  NO_ABBREV) lists the startup flow; B's (ADD, REMOVED, MODIFY, ONLY_OWN) lists
  nothing.
- bundle-commit: a bundle of two flows that forward between ports 1 and 2: nothing is
  installed before the commit, both after ("bundle committed" is printed before this
  PASS, when the test may ping).
- monitor-own-bundle: A's monitor reports its own two adds in full, once committed;
  B's (ONLY_OWN) reports nothing.
- bundle-fail: a bundle whose last flow outputs to a missing group: its commit fails
  with that flow-mod's OFPBAC_BAD_OUT_GROUP, then OFPBFC_MSG_FAILED, and no reply.
- bundle-nothing-installed: the flows are as before that bundle, no monitor reported
  anything, and the bundle is gone.
- monitor-abbrev: B's own flow-mod comes to B's monitor abbreviated, with its xid, and
  to A's in full.
- monitor-modify-remove: so do B's modify and delete of that flow (A's REMOVED update
  carries no instructions).
- request-forward: A asks for group-mods to be forwarded (OFPT_SET_ASYNC with the
  requestforward master property); B adds a group; A receives it in an
  OFPT_REQUESTFORWARD, with B's xid.
- request-forward-off: B, which did not ask, receives none of A's group-mods, and A
  none of B's refused ones.
- role-status: A asks to be master, then B: A receives OFPT_ROLE_STATUS (slave, master
  request, B's generation id), B none.
- slave-refused: A, now a slave, may not add a flow.
"""
import traceback

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import MAIN_DISPATCHER, set_ev_cls
from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_4

from conn_14 import Conn, Failure, describe

# The datapath id the test gives the switch.
DPID = 0x14

# The flow the test starts the switch with (ovs-ofctl syntax), as a flow-stats entry
# shows it.
STARTUP_FLOW = (0, 1, (("eth_type", 0x88b5),), "apply(output:2)")

# The flows of A's first bundle, which forward between ports 1 and 2.
FORWARDING = [
    (0, 10, (("in_port", 1),), "apply(output:2)"),
    (0, 10, (("in_port", 2),), "apply(output:1)"),
]

# B's flow: as B adds it, and as B modifies it.
B_FLOW = (0, 2, (("eth_type", 0x88b6),), "apply(output:1)")
B_FLOW_MODIFIED = (0, 2, (("eth_type", 0x88b6),), "apply(output:2)")

# The messages the checks wait for.
EVENTS = [
    ofp_event.EventOFPBarrierReply,
    ofp_event.EventOFPBundleCtrlMsg,
    ofp_event.EventOFPErrorMsg,
    ofp_event.EventOFPFlowMonitorReply,
    ofp_event.EventOFPFlowStatsReply,
    ofp_event.EventOFPGetAsyncReply,
    ofp_event.EventOFPPortDescStatsReply,
    ofp_event.EventOFPPortStatsReply,
    ofp_event.EventOFPRequestForward,
    ofp_event.EventOFPRoleReply,
    ofp_event.EventOFPRoleStatus,
    ofp_event.EventOFPTableDescStatsReply,
    ofp_event.EventOFPTableStatsReply,
]


def check(cond, why):
    if not cond:
        raise Failure(why)


def actions_text(actions):
    out = []
    for a in actions:
        name = type(a).__name__
        if name == "OFPActionOutput":
            out.append("output:%d" % a.port)
        elif name == "OFPActionGroup":
            out.append("group:%d" % a.group_id)
        else:
            out.append(name)
    return ",".join(out)


def instructions_text(instructions):
    """Instructions as text: "apply(output:2)"."""
    out = []
    for i in instructions:
        if type(i).__name__ == "OFPInstructionActions":
            kind = "apply" if i.type == ofproto_v1_4.OFPIT_APPLY_ACTIONS else "write"
            out.append("%s(%s)" % (kind, actions_text(i.actions)))
        else:
            out.append(type(i).__name__)
    return ";".join(out)


def flow_key(table_id, priority, match, instructions):
    """(table, priority, match fields, instructions text): a flow as the checks compare
    it (FORWARDING, B_FLOW...)"""
    return (table_id, priority, tuple(sorted(match.items())),
            instructions_text(instructions))


class Of14Features(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_4.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.conns = {}

    @set_ev_cls(ofp_event.EventOFPStateChange, MAIN_DISPATCHER)
    def ready(self, ev):
        dp = ev.datapath
        if ev.state != MAIN_DISPATCHER or id(dp) in self.conns or len(self.conns) >= 2:
            return
        name = "A" if not self.conns else "B"
        self.conns[id(dp)] = Conn(name, dp)
        print("connected %s version 0x%02x" % (name, dp.ofproto.OFP_VERSION), flush=True)
        if len(self.conns) == 2:
            hub.spawn(self.run)

    @set_ev_cls(EVENTS, MAIN_DISPATCHER)
    def received(self, ev):
        conn = self.conns.get(id(ev.msg.datapath))
        if conn is not None:
            conn.put(ev.msg)

    def run(self):
        a, b = sorted(self.conns.values(), key=lambda c: c.name)
        checks = [
            ("negotiation", self.negotiation),
            ("port-desc", self.port_desc),
            ("port-stats", self.port_stats),
            ("table-desc", self.table_desc),
            ("monitor-initial", self.monitor_initial),
            ("bundle-commit", self.bundle_commit),
            ("monitor-own-bundle", self.monitor_own_bundle),
            ("bundle-fail", self.bundle_fail),
            ("bundle-nothing-installed", self.bundle_nothing_installed),
            ("monitor-abbrev", self.monitor_abbrev),
            ("monitor-modify-remove", self.monitor_modify_remove),
            ("request-forward", self.request_forward),
            ("request-forward-off", self.request_forward_off),
            ("role-status", self.role_status),
            ("slave-refused", self.slave_refused),
        ]
        for name, f in checks:
            try:
                f(a, b)
            except Failure as e:
                print("FAIL %s: %s" % (name, e), flush=True)
                break
            except Exception:
                why = traceback.format_exc().strip().replace("\n", " | ")
                print("FAIL %s: %s" % (name, why), flush=True)
                break
            print("PASS " + name, flush=True)
        print("END", flush=True)

    # Requests.

    def flows(self, c):
        """The switch's flows as flow keys, sorted."""
        p = c.parser
        req = p.OFPFlowStatsRequest(c.dp, 0, c.ofp.OFPTT_ALL, c.ofp.OFPP_ANY,
                                    c.ofp.OFPG_ANY, 0, 0, p.OFPMatch())
        body = c.multipart(req, p.OFPFlowStatsReply)
        return sorted(flow_key(f.table_id, f.priority, f.match, f.instructions)
                      for f in body)

    def flow_mod(self, c, priority, match, actions):
        p = c.parser
        inst = [p.OFPInstructionActions(c.ofp.OFPIT_APPLY_ACTIONS, actions)]
        return p.OFPFlowMod(c.dp, priority=priority, match=match, instructions=inst)

    def bundle_ctrl(self, c, bundle_id, type_):
        p = c.parser
        flags = c.ofp.OFPBF_ATOMIC | c.ofp.OFPBF_ORDERED
        return p.OFPBundleCtrlMsg(c.dp, bundle_id, type_, flags, [])

    def bundle_add(self, c, bundle_id, msg):
        """Adds `msg` to bundle `bundle_id`; the add's xid (the message's too)."""
        flags = c.ofp.OFPBF_ATOMIC | c.ofp.OFPBF_ORDERED
        return c.send(c.parser.OFPBundleAddMsg(c.dp, bundle_id, flags, msg, []))

    def bundle_reply(self, c, bundle_id, type_, reply_type):
        reply = c.request(self.bundle_ctrl(c, bundle_id, type_), c.parser.OFPBundleCtrlMsg)[0]
        check((reply.bundle_id, reply.type) == (bundle_id, reply_type),
              "%s: bundle %d control %d: reply for bundle %d type %d, not type %d"
              % (c.name, bundle_id, type_, reply.bundle_id, reply.type, reply_type))

    def monitor_updates(self, c):
        """The flow updates c's monitors sent up to a barrier, each as (event, flow key,
        reason) or ("ABBREV", xid); Failure if anything else came."""
        got = c.drain()
        other = [m for m in got if not isinstance(m, c.parser.OFPFlowMonitorReply)]
        check(not other, "%s: expected only flow monitor updates, got %s"
              % (c.name, ", ".join(describe(m) for m in other)))
        return [("ABBREV", u.xid) if u.event == c.ofp.OFPFME_ABBREV
                else (u.event, flow_key(u.table_id, u.priority, u.match, u.instructions),
                      u.reason)
                for m in got for u in m.body]

    def expect_errors(self, c, expected):
        """What c received up to a barrier must be exactly the errors `expected`, each
        (xid, type, code), in order."""
        got = c.drain()
        seen = [(m.xid, m.type, m.code) if isinstance(m, c.parser.OFPErrorMsg)
                else describe(m) for m in got]
        check(seen == expected, "%s: expected errors %s, got %s" % (c.name, expected, seen))
        return got

    # The checks.

    def negotiation(self, a, b):
        for c in (a, b):
            check((c.ofp.OFP_VERSION, c.dp.id) == (0x05, DPID),
                  "%s: version 0x%02x, datapath id %#x" % (c.name, c.ofp.OFP_VERSION, c.dp.id))

    def port_desc(self, a, b):
        p, ofp = a.parser, a.ofp
        ports = a.multipart(p.OFPPortDescStatsRequest(a.dp, 0), p.OFPPortDescStatsReply)
        check(sorted(x.port_no for x in ports) == [1, 2],
              "ports %s" % [x.port_no for x in ports])
        for port in ports:
            eth = [x for x in port.properties if isinstance(x, p.OFPPortDescPropEthernet)]
            check(len(eth) == 1 and len(port.properties) == 1,
                  "port %d properties %s" % (port.port_no, port.properties))
            check(eth[0].type == ofp.OFPPDPT_ETHERNET and eth[0].max_speed == eth[0].curr_speed,
                  "port %d ethernet property %s" % (port.port_no, eth[0]))
            name = port.name.decode() if isinstance(port.name, bytes) else port.name
            print("PORT %d %s %d %s" % (port.port_no, name, eth[0].curr_speed, port.hw_addr),
                  flush=True)

    def port_stats(self, a, b):
        p, ofp = a.parser, a.ofp
        req = p.OFPPortStatsRequest(a.dp, 0, ofp.OFPP_ANY)
        stats = a.multipart(req, p.OFPPortStatsReply)
        check(sorted(s.port_no for s in stats) == [1, 2],
              "port stats for %s" % [s.port_no for s in stats])
        for s in stats:
            eth = [x for x in s.properties if isinstance(x, p.OFPPortStatsPropEthernet)]
            check(len(eth) == 1, "port %d stats properties %s" % (s.port_no, s.properties))

    def table_desc(self, a, b):
        p = a.parser
        desc = a.multipart(p.OFPTableDescStatsRequest(a.dp, 0), p.OFPTableDescStatsReply)
        ids = [t.table_id for t in desc]
        stats = a.multipart(p.OFPTableStatsRequest(a.dp, 0), p.OFPTableStatsReply)
        check(ids and ids == list(range(len(ids))),
              "table desc ids %s..%s (%d)" % (ids[:1], ids[-1:], len(ids)))
        check(ids == [t.table_id for t in stats],
              "%d table descriptions, %d tables in table stats" % (len(ids), len(stats)))

    def monitor_request(self, c, flags):
        p, ofp = c.parser, c.ofp
        req = p.OFPFlowMonitorRequest(c.dp, 0, 1, ofp.OFPP_ANY, ofp.OFPG_ANY, flags,
                                      ofp.OFPTT_ALL, ofp.OFPFMC_ADD, p.OFPMatch())
        return c.multipart(req, p.OFPFlowMonitorReply)

    def monitor_initial(self, a, b):
        ofp = a.ofp
        flags = (ofp.OFPFMF_INITIAL | ofp.OFPFMF_ADD | ofp.OFPFMF_REMOVED
                 | ofp.OFPFMF_MODIFY | ofp.OFPFMF_INSTRUCTIONS | ofp.OFPFMF_NO_ABBREV)
        initial = self.monitor_request(a, flags)
        got = [(u.event, flow_key(u.table_id, u.priority, u.match, u.instructions))
               for u in initial]
        check(got == [(ofp.OFPFME_INITIAL, STARTUP_FLOW)],
              "A's monitor: initial updates %s" % got)
        flags = ofp.OFPFMF_ADD | ofp.OFPFMF_REMOVED | ofp.OFPFMF_MODIFY | ofp.OFPFMF_ONLY_OWN
        initial = self.monitor_request(b, flags)
        check(initial == [], "B's monitor (no INITIAL): initial updates %s" % initial)

    def forwarding(self, c):
        """The flow-mods of A's first bundle (FORWARDING)."""
        p = c.parser
        return [
            self.flow_mod(c, 10, p.OFPMatch(in_port=1), [p.OFPActionOutput(2)]),
            self.flow_mod(c, 10, p.OFPMatch(in_port=2), [p.OFPActionOutput(1)]),
        ]

    def bundle_commit(self, a, b):
        ofp = a.ofp
        self.bundle_reply(a, 1, ofp.OFPBCT_OPEN_REQUEST, ofp.OFPBCT_OPEN_REPLY)
        for fm in self.forwarding(a):
            self.bundle_add(a, 1, fm)
        self.bundle_reply(a, 1, ofp.OFPBCT_CLOSE_REQUEST, ofp.OFPBCT_CLOSE_REPLY)
        before = self.flows(a)
        check(before == [STARTUP_FLOW], "flows before the commit: %s" % before)
        self.bundle_reply(a, 1, ofp.OFPBCT_COMMIT_REQUEST, ofp.OFPBCT_COMMIT_REPLY)
        after = self.flows(a)
        check(after == sorted([STARTUP_FLOW] + FORWARDING),
              "flows after the commit: %s" % after)
        print("bundle committed", flush=True)

    def monitor_own_bundle(self, a, b):
        ofp = a.ofp
        got = self.monitor_updates(a)
        want = [(ofp.OFPFME_ADDED, k, 0) for k in FORWARDING]
        check(got == want, "A's monitor (NO_ABBREV) after the commit: %s, not %s"
              % (got, want))
        b.quiet("message (B's monitor is ONLY_OWN)")

    def failing(self, c):
        """The flow-mods of A's second bundle: the last outputs to a missing group."""
        p = c.parser
        return [
            self.flow_mod(c, 20, p.OFPMatch(in_port=1), [p.OFPActionOutput(2)]),
            self.flow_mod(c, 20, p.OFPMatch(in_port=2), [p.OFPActionGroup(99)]),
        ]

    def bundle_fail(self, a, b):
        ofp = a.ofp
        self.bundle_reply(a, 2, ofp.OFPBCT_OPEN_REQUEST, ofp.OFPBCT_OPEN_REPLY)
        xids = [self.bundle_add(a, 2, fm) for fm in self.failing(a)]
        commit = a.send(self.bundle_ctrl(a, 2, ofp.OFPBCT_COMMIT_REQUEST))
        got = self.expect_errors(a, [
            (xids[1], ofp.OFPET_BAD_ACTION, ofp.OFPBAC_BAD_OUT_GROUP),
            (commit, ofp.OFPET_BUNDLE_FAILED, ofp.OFPBFC_MSG_FAILED),
        ])
        # The first error carries the start of the flow-mod that failed.
        data = bytes(got[0].data)
        check(len(data) >= 8 and data[0] == 0x05 and data[1] == ofp.OFPT_FLOW_MOD
              and int.from_bytes(data[4:8], "big") == xids[1],
              "the error's data is not the failing flow-mod: %s" % data[:8].hex())

    def bundle_nothing_installed(self, a, b):
        ofp = a.ofp
        now = self.flows(a)
        check(now == sorted([STARTUP_FLOW] + FORWARDING),
              "flows after the failed commit: %s" % now)
        b.quiet("message after A's failed commit")
        commit = a.send(self.bundle_ctrl(a, 2, ofp.OFPBCT_COMMIT_REQUEST))
        self.expect_errors(a, [(commit, ofp.OFPET_BUNDLE_FAILED, ofp.OFPBFC_BAD_ID)])

    def monitor_abbrev(self, a, b):
        p, ofp = b.parser, b.ofp
        xid = b.send(self.flow_mod(b, 2, p.OFPMatch(eth_type=0x88b6), [p.OFPActionOutput(1)]))
        got = self.monitor_updates(b)
        check(got == [("ABBREV", xid)], "B's monitor after B's flow-mod %d: %s" % (xid, got))
        got = self.monitor_updates(a)
        want = [(ofp.OFPFME_ADDED, B_FLOW, 0)]
        check(got == want, "A's monitor after B's flow-mod: %s, not %s" % (got, want))

    def monitor_modify_remove(self, a, b):
        p, ofp = b.parser, b.ofp
        inst = [p.OFPInstructionActions(ofp.OFPIT_APPLY_ACTIONS, [p.OFPActionOutput(2)])]
        modify = p.OFPFlowMod(b.dp, command=ofp.OFPFC_MODIFY_STRICT, priority=2,
                              match=p.OFPMatch(eth_type=0x88b6), instructions=inst)
        delete = p.OFPFlowMod(b.dp, command=ofp.OFPFC_DELETE_STRICT, priority=2,
                              out_port=ofp.OFPP_ANY, out_group=ofp.OFPG_ANY,
                              match=p.OFPMatch(eth_type=0x88b6))
        xids = [b.send(modify), b.send(delete)]
        got = self.monitor_updates(b)
        want = [("ABBREV", x) for x in xids]
        check(got == want, "B's monitor after B's modify and delete: %s, not %s"
              % (got, want))
        # A removal carries no instructions.
        got = self.monitor_updates(a)
        want = [(ofp.OFPFME_MODIFIED, B_FLOW_MODIFIED, 0),
                (ofp.OFPFME_REMOVED, B_FLOW_MODIFIED[:3] + (instructions_text([]),),
                 ofp.OFPRR_DELETE)]
        check(got == want, "A's monitor after B's modify and delete: %s, not %s"
              % (got, want))
        now = self.flows(a)
        check(now == sorted([STARTUP_FLOW] + FORWARDING), "flows after B's delete: %s" % now)

    def group_mod(self, c, group_id, port):
        p, ofp = c.parser, c.ofp
        buckets = [p.OFPBucket(actions=[p.OFPActionOutput(port)])]
        return p.OFPGroupMod(c.dp, ofp.OFPGC_ADD, ofp.OFPGT_ALL, group_id, buckets)

    def request_forward(self, a, b):
        p, ofp = a.parser, a.ofp
        prop = p.OFPAsyncConfigPropReasons(ofp.OFPACPT_REQUESTFORWARD_MASTER, 8,
                                           1 << ofp.OFPRFR_GROUP_MOD)
        a.send(p.OFPSetAsync(a.dp, [prop]))
        reply = a.request(p.OFPGetAsyncRequest(a.dp), p.OFPGetAsyncReply)[0]
        masks = {x.type: x.mask for x in reply.properties
                 if isinstance(x, p.OFPAsyncConfigPropReasons)}
        want = {ofp.OFPACPT_REQUESTFORWARD_MASTER: 1, ofp.OFPACPT_REQUESTFORWARD_SLAVE: 0}
        got = {t: masks.get(t) for t in want}
        check(got == want, "A's requestforward masks after set-async: %s" % got)
        xid = b.send(self.group_mod(b, 7, 1))
        b.quiet("message after B's group-mod")
        fwd = a.expect("OFPT_REQUESTFORWARD",
                       lambda m: isinstance(m, p.OFPRequestForward))
        req = fwd.request
        check(isinstance(req, p.OFPGroupMod), "forwarded %s" % describe(req))
        buckets = [actions_text(x.actions) for x in req.buckets]
        got = (req.xid, req.command, req.type, req.group_id, buckets)
        want = (xid, ofp.OFPGC_ADD, ofp.OFPGT_ALL, 7, ["output:1"])
        check(got == want, "forwarded group-mod %s, not %s" % (got, want))
        a.quiet("message after the forwarded group-mod")

    def request_forward_off(self, a, b):
        ofp = a.ofp
        a.send(self.group_mod(a, 8, 2))
        a.quiet("message after A's group-mod")
        b.quiet("message (B did not ask for request forwarding)")
        xid = b.send(self.group_mod(b, 7, 1))
        self.expect_errors(b, [(xid, ofp.OFPET_GROUP_MOD_FAILED, ofp.OFPGMFC_GROUP_EXISTS)])
        a.quiet("message after B's refused group-mod")

    def role_request(self, c, role, generation_id):
        p = c.parser
        reply = c.request(p.OFPRoleRequest(c.dp, role, generation_id), p.OFPRoleReply)[0]
        check((reply.role, reply.generation_id) == (role, generation_id),
              "%s: role reply %d generation %d" % (c.name, reply.role, reply.generation_id))

    def role_status(self, a, b):
        p, ofp = a.parser, a.ofp
        self.role_request(a, ofp.OFPCR_ROLE_MASTER, 1)
        a.quiet("message after A became master")
        self.role_request(b, ofp.OFPCR_ROLE_MASTER, 2)
        status = a.expect("OFPT_ROLE_STATUS", lambda m: isinstance(m, p.OFPRoleStatus))
        got = (status.role, status.reason, status.generation_id)
        want = (ofp.OFPCR_ROLE_SLAVE, ofp.OFPCRR_MASTER_REQUEST, 2)
        check(got == want, "A's role status (role, reason, generation) %s, not %s"
              % (got, want))
        a.quiet("message after the role status")
        b.quiet("message to the new master")

    def slave_refused(self, a, b):
        p, ofp = a.parser, a.ofp
        xid = a.send(self.flow_mod(a, 3, p.OFPMatch(in_port=1), [p.OFPActionOutput(2)]))
        self.expect_errors(a, [(xid, ofp.OFPET_BAD_REQUEST, ofp.OFPBRC_IS_SLAVE)])
