//! Port arguments (`dump-ports PORT`, `mod-port PORT`, `packet-out IN_PORT`): a number,
//! a reserved name (`LOCAL`, `CONTROLLER`, `IN_PORT`, ..., any case), or a port's name,
//! looked up in the switch's port descriptions as ovs-ofctl does.

use openflow::v10::Message as M10;
use openflow::v13::multipart::{MultipartReplyBody, MultipartRequest, MultipartRequestBody};
use openflow::v13::Message as M13;
use openflow::{Message, OFP10_VERSION};

use super::conn::Conn;
use super::CtlError;
use openflow::model::Port;

/// A port number or reserved name, in the 32-bit numbering; `None` for anything else
/// (which may be a port's name).
pub fn parse_port_literal(s: &str) -> Option<u32> {
    let reserved = match s.to_ascii_uppercase().as_str() {
        "IN_PORT" => Some(0xffff_fff8),
        "TABLE" => Some(0xffff_fff9),
        "NORMAL" => Some(0xffff_fffa),
        "FLOOD" => Some(0xffff_fffb),
        "ALL" => Some(0xffff_fffc),
        "CONTROLLER" => Some(0xffff_fffd),
        "LOCAL" => Some(0xffff_fffe),
        "ANY" | "NONE" => Some(0xffff_ffff),
        _ => None,
    };
    if reserved.is_some() {
        return reserved;
    }
    if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) {
        return s.parse::<u32>().ok();
    }
    None
}

/// The switch's ports: a port-desc request on 1.3, the features reply on 1.0.
pub fn fetch_ports(conn: &mut Conn) -> Result<Vec<Port>, CtlError> {
    if conn.version == OFP10_VERSION {
        let f = conn.transact(Message::V10(M10::FeaturesRequest))?;
        match f.message {
            Message::V10(M10::FeaturesReply(r)) => Ok(r.ports),
            _ => Err(CtlError::fatal(format!("{}: bad reply to features request", conn.name))),
        }
    } else {
        let frames = conn.dump(Message::V13(M13::MultipartRequest(MultipartRequest {
            flags: 0,
            body: MultipartRequestBody::PortDesc,
        })))?;
        let mut out = Vec::new();
        for f in frames {
            if let Message::V13(M13::MultipartReply(r)) = f.message {
                if let MultipartReplyBody::PortDesc(ps) = r.body {
                    out.extend(ps);
                }
            }
        }
        Ok(out)
    }
}

/// Finds a port by number or name among `ports`.
pub fn find_port<'a>(ports: &'a [Port], arg: &str) -> Option<&'a Port> {
    match parse_port_literal(arg) {
        Some(n) => ports.iter().find(|p| p.port_no == n),
        None => ports.iter().find(|p| p.name == arg),
    }
}

/// A port argument as a number, asking the switch for names it does not know.
pub fn resolve_port(conn: &mut Conn, arg: &str) -> Result<u32, CtlError> {
    if let Some(n) = parse_port_literal(arg) {
        return Ok(n);
    }
    let ports = fetch_ports(conn)?;
    find_port(&ports, arg)
        .map(|p| p.port_no)
        .ok_or_else(|| CtlError::fatal(format!("{}: unknown port `{arg}'", conn.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_reserved_names() {
        assert_eq!(parse_port_literal("5"), Some(5));
        assert_eq!(parse_port_literal("LOCAL"), Some(0xffff_fffe));
        assert_eq!(parse_port_literal("local"), Some(0xffff_fffe));
        assert_eq!(parse_port_literal("controller"), Some(0xffff_fffd));
        assert_eq!(parse_port_literal("eth0"), None);
        assert_eq!(parse_port_literal("-1"), None);
        assert_eq!(parse_port_literal(""), None);
    }

    #[test]
    fn finds_by_number_or_name() {
        let p = |n, name: &str| Port { port_no: n, name: name.into(), ..Port::default() };
        let ports = vec![p(1, "p1"), p(2, "p2"), p(0xffff_fffe, "br0")];
        assert_eq!(find_port(&ports, "p2").map(|p| p.port_no), Some(2));
        assert_eq!(find_port(&ports, "1").map(|p| p.name.as_str()), Some("p1"));
        assert_eq!(find_port(&ports, "LOCAL").map(|p| p.name.as_str()), Some("br0"));
        assert!(find_port(&ports, "p9").is_none());
        assert!(find_port(&ports, "7").is_none());
    }
}
