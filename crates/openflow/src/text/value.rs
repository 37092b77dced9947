//! Values in ovs-ofctl text: numbers (decimal or `0x` hex), MAC, IPv4 and IPv6
//! addresses with optional masks, and port numbers with their reserved names; and the
//! matching printers, which copy Open vSwitch's output byte for byte (e.g. IPv6 as glibc's
//! `inet_ntop` writes it, prefixes as `/n`, other masks in full).

use super::error::{Span, TextError};
use crate::action::port;
use crate::wire::MacAddr;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Parses an unsigned number: decimal, or hex with a `0x`/`0X` prefix.
pub(crate) fn parse_u64_str(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// The bytes an even number of hex digits spell (`0a1b` is `[0x0a, 0x1b]`); `None` for
/// anything else.
pub(crate) fn decode_hex(digits: &str) -> Option<Vec<u8>> {
    if digits.len() % 2 == 1 || !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    (0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).ok()).collect()
}

/// Parses a number no larger than `max`; `what` names it in errors.
pub(crate) fn parse_num(sp: Span<'_>, max: u64, what: &str) -> Result<u64, TextError> {
    let v = parse_u64_str(sp.text).ok_or_else(|| {
        sp.err(format!("{what}: \"{}\" is not a number (decimal or 0x hex)", sp.text))
    })?;
    if v > max {
        return Err(sp.err(format!("{what}: {v} is out of range (maximum {max})")));
    }
    Ok(v)
}

/// Splits `value/mask`.
pub(crate) fn split_mask(sp: Span<'_>) -> (Span<'_>, Option<Span<'_>>) {
    sp.split_once("/")
}

/// Parses `n[/m]` numbers no larger than `max`.
pub(crate) fn parse_num_masked(
    sp: Span<'_>,
    max: u64,
    what: &str,
) -> Result<(u64, Option<u64>), TextError> {
    let (v, m) = split_mask(sp);
    let v = parse_num(v, max, what)?;
    let m = match m {
        Some(m) => Some(parse_num(m, max, what)?),
        None => None,
    };
    Ok((v, m))
}

pub(crate) fn parse_mac(sp: Span<'_>) -> Result<MacAddr, TextError> {
    sp.text.parse::<MacAddr>().map_err(|_| {
        sp.err(format!("\"{}\" is not an Ethernet address (xx:xx:xx:xx:xx:xx)", sp.text))
    })
}

pub(crate) fn parse_mac_masked(sp: Span<'_>) -> Result<(MacAddr, Option<MacAddr>), TextError> {
    let (v, m) = split_mask(sp);
    let v = parse_mac(v)?;
    let m = match m {
        Some(m) => Some(parse_mac(m)?),
        None => None,
    };
    Ok((v, m))
}

/// An IP address family as ovs-ofctl text writes it: `addr`, `addr/n` (a prefix of `n`
/// bits) or `addr/mask`.
pub(crate) trait IpText: Copy + std::str::FromStr {
    /// `IPv4` or `IPv6`, for errors.
    const NAME: &'static str;
    /// Bits in an address.
    const BITS: u32;
    /// A character every address has and no prefix length has.
    const SEPARATOR: char;
    /// The mask of the first `n` bits (`n` at most [`IpText::BITS`]).
    fn prefix(n: u32) -> Self;
    /// `Some(n)` when the address, as a mask, is the first `n` bits.
    fn prefix_len(self) -> Option<u32>;
    /// The address as Open vSwitch prints it.
    fn text(self) -> String;
}

impl IpText for Ipv4Addr {
    const NAME: &'static str = "IPv4";
    const BITS: u32 = 32;
    const SEPARATOR: char = '.';
    fn prefix(n: u32) -> Self {
        Ipv4Addr::from(u32::MAX.checked_shl(32 - n).unwrap_or(0))
    }
    fn prefix_len(self) -> Option<u32> {
        let v = u32::from(self);
        (v.leading_ones() + v.trailing_zeros() == 32).then(|| v.leading_ones())
    }
    fn text(self) -> String {
        self.to_string()
    }
}

impl IpText for Ipv6Addr {
    const NAME: &'static str = "IPv6";
    const BITS: u32 = 128;
    const SEPARATOR: char = ':';
    fn prefix(n: u32) -> Self {
        Ipv6Addr::from(u128::MAX.checked_shl(128 - n).unwrap_or(0))
    }
    fn prefix_len(self) -> Option<u32> {
        let v = u128::from(self);
        (v.leading_ones() + v.trailing_zeros() == 128).then(|| v.leading_ones())
    }
    fn text(self) -> String {
        format_ipv6(self)
    }
}

/// An IPv4 or IPv6 address.
pub(crate) fn parse_ip<A: IpText>(sp: Span<'_>) -> Result<A, TextError> {
    sp.text
        .parse::<A>()
        .map_err(|_| sp.err(format!("\"{}\" is not an {} address", sp.text, A::NAME)))
}

/// `addr`, `addr/n` (0..=32 for IPv4, 0..=128 for IPv6) or `addr/mask`.
pub(crate) fn parse_ip_masked<A: IpText>(sp: Span<'_>) -> Result<(A, Option<A>), TextError> {
    let (v, m) = split_mask(sp);
    let v = parse_ip(v)?;
    let m = match m {
        None => None,
        Some(m) if !m.text.contains(A::SEPARATOR) => {
            let what = format!("{} prefix length", A::NAME);
            Some(A::prefix(parse_num(m, A::BITS.into(), &what)? as u32))
        }
        Some(m) => Some(parse_ip(m)?),
    };
    Ok((v, m))
}

/// Reserved port names, in the spelling Open vSwitch prints.
const PORT_NAMES: [(&str, u32); 8] = [
    ("IN_PORT", port::IN_PORT),
    ("TABLE", port::TABLE),
    ("NORMAL", port::NORMAL),
    ("FLOOD", port::FLOOD),
    ("ALL", port::ALL),
    ("CONTROLLER", port::CONTROLLER),
    ("LOCAL", port::LOCAL),
    ("ANY", port::ANY),
];

/// A port: a reserved name (any case; `NONE` is `ANY`) or a number. As in Open vSwitch,
/// 0xff00..=0xffff are OpenFlow 1.0 reserved numbers and become 0xffffff00..=0xffffffff
/// (so 65534 is LOCAL); every other number is taken as the 32-bit OpenFlow 1.3 port.
pub(crate) fn parse_port(sp: Span<'_>) -> Result<u32, TextError> {
    if let Some(&(_, p)) = PORT_NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(sp.text)) {
        return Ok(p);
    }
    if sp.text.eq_ignore_ascii_case("NONE") {
        return Ok(port::ANY);
    }
    match parse_u64_str(sp.text) {
        Some(n @ 0xff00..=0xffff) => Ok(n as u32 | 0xffff_0000),
        Some(n) if n <= u32::MAX as u64 => Ok(n as u32),
        Some(n) => Err(sp.err(format!("port {n} is out of range (maximum 4294967295)"))),
        None => Err(sp.err(format!(
            "unknown port \"{}\" (use a number or one of IN_PORT, TABLE, NORMAL, FLOOD, ALL, \
             CONTROLLER, LOCAL, ANY; interface names are not known here)",
            sp.text
        ))),
    }
}

/// A port as Open vSwitch prints it: reserved ports by name, 0xffffff00..=0xfffffff7 in
/// OpenFlow 1.0 numbering (65280..), others in decimal.
pub(crate) fn format_port(p: u32) -> String {
    if let Some((n, _)) = PORT_NAMES.iter().find(|(_, v)| *v == p) {
        return (*n).to_string();
    }
    if p >= port::MAX {
        return (p & 0xffff).to_string();
    }
    p.to_string()
}

/// Hex as Open vSwitch's `ds_put_hex` writes it: `0` for zero, else `0x` and digits.
pub(crate) fn hex_or_zero(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// An IP address with mask: no mask when all ones, `/n` for a prefix, else in full.
pub(crate) fn format_ip_masked<A: IpText>(a: A, m: Option<A>) -> String {
    let Some(m) = m else {
        return a.text();
    };
    match m.prefix_len() {
        Some(n) if n == A::BITS => a.text(),
        Some(n) => format!("{}/{n}", a.text()),
        None => format!("{}/{}", a.text(), m.text()),
    }
}

/// An IPv6 address exactly as glibc's `inet_ntop` writes it: the longest run (first on
/// ties) of two or more zero groups becomes `::`; `::a.b.c.d` and `::ffff:a.b.c.d` keep
/// the IPv4 address dotted.
pub(crate) fn format_ipv6(a: Ipv6Addr) -> String {
    let w = a.segments();
    let (mut best, mut best_len) = (usize::MAX, 0usize);
    let mut i = 0;
    while i < 8 {
        if w[i] == 0 {
            let s = i;
            while i < 8 && w[i] == 0 {
                i += 1;
            }
            if i - s > best_len {
                best = s;
                best_len = i - s;
            }
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best = usize::MAX;
    }
    let mut out = String::new();
    let mut i = 0;
    while i < 8 {
        if i == best {
            out.push_str(if i == 0 { "::" } else { ":" });
            i += best_len;
            continue;
        }
        if i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff)) {
            let o = a.octets();
            out.push_str(&format!("{}.{}.{}.{}", o[12], o[13], o[14], o[15]));
            break;
        }
        out.push_str(&format!("{:x}", w[i]));
        if i < 7 {
            out.push(':');
        }
        i += 1;
    }
    out
}

/// An Ethernet address with mask: no mask when all ones.
pub(crate) fn format_mac_masked(a: MacAddr, m: Option<MacAddr>) -> String {
    match m {
        Some(m) if m != MacAddr::BROADCAST => format!("{a}/{m}"),
        _ => a.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp(s: &str) -> Span<'_> {
        Span::new(s, 0)
    }

    #[test]
    fn numbers_decimal_and_hex_with_ranges() {
        assert_eq!(parse_num(sp("10"), 255, "x").unwrap(), 10);
        assert_eq!(parse_num(sp("0x1F"), 255, "x").unwrap(), 31);
        assert!(parse_num(sp("256"), 255, "x").unwrap_err().message.contains("out of range"));
        assert!(parse_num(sp("0x"), 255, "x").is_err());
        assert!(parse_num(sp("-1"), 255, "x").is_err());
        assert!(parse_num(sp("99999999999999999999999"), u64::MAX, "x").is_err());
        assert_eq!(parse_num_masked(sp("0x5/0xff"), u64::MAX, "x").unwrap(), (5, Some(255)));
    }

    #[test]
    fn ipv4_masks_prefix_and_dotted() {
        let (a, m) = parse_ip_masked::<Ipv4Addr>(sp("10.1.2.3/8")).unwrap();
        assert_eq!((a, m), ("10.1.2.3".parse().unwrap(), Some("255.0.0.0".parse().unwrap())));
        let (_, m) = parse_ip_masked::<Ipv4Addr>(sp("10.1.2.3/0")).unwrap();
        assert_eq!(m, Some(Ipv4Addr::UNSPECIFIED));
        assert!(parse_ip_masked::<Ipv4Addr>(sp("10.1.2.3/33")).is_err());
        assert!(parse_ip_masked::<Ipv4Addr>(sp("10.1.2/8")).is_err());
        assert_eq!(
            format_ip_masked::<Ipv4Addr>(
                "1.0.3.0".parse().unwrap(),
                Some("255.0.255.0".parse().unwrap())
            ),
            "1.0.3.0/255.0.255.0"
        );
        assert_eq!(
            format_ip_masked::<Ipv4Addr>(
                "1.2.0.0".parse().unwrap(),
                Some("255.255.0.0".parse().unwrap())
            ),
            "1.2.0.0/16"
        );
    }

    #[test]
    fn ipv6_prints_like_inet_ntop() {
        let f = |s: &str| format_ipv6(s.parse().unwrap());
        assert_eq!(f("::1.2.3.4"), "::1.2.3.4");
        assert_eq!(f("::ffff:1.2.3.4"), "::ffff:1.2.3.4");
        assert_eq!(f("1:0:0:1:0:0:0:1"), "1:0:0:1::1");
        assert_eq!(f("0:0:1::"), "0:0:1::");
        assert_eq!(f("::"), "::");
        assert_eq!(f("::1"), "::1");
        assert_eq!(f("2001:db8::"), "2001:db8::");
        assert_eq!(f("1:2:3:4:5:6:7:8"), "1:2:3:4:5:6:7:8");
        assert_eq!(f("1:0:2:3:4:5:6:7"), "1:0:2:3:4:5:6:7");
        assert_eq!(
            format_ip_masked::<Ipv6Addr>(
                "2001::".parse().unwrap(),
                Some("ffff:0:ffff::".parse().unwrap())
            ),
            "2001::/ffff:0:ffff::"
        );
        assert_eq!(
            format_ip_masked::<Ipv6Addr>("::".parse().unwrap(), Some("8000::".parse().unwrap())),
            "::/1"
        );
    }

    #[test]
    fn ports_names_and_of10_numbers() {
        assert_eq!(parse_port(sp("local")).unwrap(), port::LOCAL);
        assert_eq!(parse_port(sp("65534")).unwrap(), port::LOCAL);
        assert_eq!(parse_port(sp("4294967040")).unwrap(), 0xffff_ff00);
        assert_eq!(parse_port(sp("NONE")).unwrap(), port::ANY);
        assert!(parse_port(sp("eth0")).unwrap_err().message.contains("unknown port"));
        assert_eq!(format_port(port::LOCAL), "LOCAL");
        assert_eq!(format_port(0xffff_ff00), "65280");
        assert_eq!(format_port(7), "7");
    }

    #[test]
    fn hex_zero_is_bare() {
        assert_eq!(hex_or_zero(0), "0");
        assert_eq!(hex_or_zero(0x5), "0x5");
    }
}
