"""One OpenFlow connection of an os-ken application seen as a sequence of requests and
answers, for applications that check a switch step by step (of14_features_14): the
application's event handlers put each message the switch sends on the connection's
queue, and a checking thread sends requests and waits, bounded in time, for what
should come back.

Every wait that is not satisfied raises Failure, whose text says what was expected and
what came instead.

Importing this module also makes os-ken 1.4 decode every full flow update
(decode_full_flow_updates).
"""
import time

from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_4 as ofp
from os_ken.ofproto import ofproto_v1_4_parser as parser

# How long to wait for an answer the switch owes, in seconds.
WAIT = 5.0


def decode_full_flow_updates():
    """os-ken 4.2.2 registers one class, OFPFlowUpdateFull, for the four full flow
    update events, and its decoder asserts that the event is the last one registered
    (OFPFME_INITIAL): a flow monitor reply with an ADDED, REMOVED or MODIFIED update is
    dropped as malformed, and the application never sees it. Each of these events gets
    a subclass of its own here, so the assertion holds. The REMOVED one also accepts
    instructions, which os-ken asserts are absent and the switch includes; the
    application compares removals without them."""

    class Removed(parser.OFPFlowUpdateFull):
        cls_flow_update_event = ofp.OFPFME_REMOVED

        def __init__(self, length=None, event=None, table_id=None, reason=None,
                     idle_timeout=None, hard_timeout=None, priority=None, cookie=None,
                     match=None, instructions=None):
            super().__init__(length, event, table_id, reason, idle_timeout,
                             hard_timeout, priority, cookie, match, [])
            self.instructions = instructions or []

    events = parser.OFPFlowUpdateHeader._EVENT
    events[ofp.OFPFME_REMOVED] = Removed
    for event in (ofp.OFPFME_ADDED, ofp.OFPFME_MODIFIED):
        events[event] = type("OFPFlowUpdateFull", (parser.OFPFlowUpdateFull,),
                             {"cls_flow_update_event": event})


decode_full_flow_updates()


class Failure(Exception):
    """A check that did not hold; its text says why."""


def describe(msg):
    """A short text for a message the switch sent: its class, xid and, for an error,
    its type and code."""
    name = type(msg).__name__
    if name == "OFPErrorMsg":
        return "OFPErrorMsg(xid=%s type=%d code=%d)" % (msg.xid, msg.type, msg.code)
    return "%s(xid=%s)" % (name, msg.xid)


class Conn:
    """A datapath (one connection to the switch) with the messages received on it."""

    def __init__(self, name, dp):
        self.name = name
        self.dp = dp
        self.ofp = dp.ofproto
        self.parser = dp.ofproto_parser
        self.queue = hub.Queue()
        # Messages received but not yet taken by a wait.
        self.pending = []

    def put(self, msg):
        """Called by the application's event handlers."""
        self.queue.put(msg)

    def send(self, msg):
        """Sends `msg`; its xid."""
        self.dp.send_msg(msg)
        return msg.xid

    def _next(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            return self.queue.get(timeout=left)
        except hub.QueueEmpty:
            return None

    def expect(self, what, pred, timeout=WAIT):
        """The first message received (or to come within `timeout`) for which `pred`
        holds; others stay pending. Failure if none comes."""
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            m = self._next(deadline)
            if m is None:
                got = ", ".join(describe(m) for m in self.pending) or "nothing"
                raise Failure("%s: no %s within %.0f s; received %s"
                              % (self.name, what, timeout, got))
            if pred(m):
                return m
            self.pending.append(m)

    def request(self, req, reply_cls, timeout=WAIT):
        """Sends request `req` and returns its reply of class `reply_cls` (the parts of a
        multipart reply, in order). Failure on an error with the request's xid."""
        xid = self.send(req)
        parts = []
        while True:
            m = self.expect(
                "%s to xid %d" % (reply_cls.__name__, xid),
                lambda m: m.xid == xid and isinstance(m, (reply_cls, self.parser.OFPErrorMsg)),
                timeout)
            if isinstance(m, self.parser.OFPErrorMsg):
                raise Failure("%s: %s refused: %s"
                              % (self.name, type(req).__name__, describe(m)))
            parts.append(m)
            more = isinstance(m, self.parser.OFPMultipartReply) and \
                m.flags & self.ofp.OFPMPF_REPLY_MORE
            if not more:
                return parts

    def multipart(self, req, reply_cls, timeout=WAIT):
        """The bodies of the reply to multipart request `req`, joined."""
        return [b for part in self.request(req, reply_cls, timeout) for b in part.body]

    def drain(self, timeout=WAIT):
        """Everything received up to the reply to a barrier sent now (the messages the
        switch queued on this connection before it handled the barrier), in order;
        nothing stays pending."""
        xid = self.send(self.parser.OFPBarrierRequest(self.dp))
        self.expect("barrier reply to xid %d" % xid,
                    lambda m: m.xid == xid and isinstance(m, self.parser.OFPBarrierReply),
                    timeout)
        got, self.pending = self.pending, []
        return got

    def quiet(self, what, pred=lambda m: True):
        """Failure if anything received up to a barrier's reply (drain) is a `what`
        (`pred` holds for it)."""
        extra = [m for m in self.drain() if pred(m)]
        if extra:
            raise Failure("%s: unexpected %s: %s"
                          % (self.name, what, ", ".join(describe(m) for m in extra)))
