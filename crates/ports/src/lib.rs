//! Port backends behind one batch trait: AF_XDP, AF_PACKET (TPACKET_V3), tap, pcap and
//! in-memory ports.
//!
//! Not built yet: this crate is the subject of issue 5. It knows nothing of OpenFlow.
