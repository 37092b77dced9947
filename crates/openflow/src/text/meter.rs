//! Meters in ovs-ofctl text: `add-meter`/`mod-meter`/`del-meter` syntax to [`MeterMod`],
//! and [`MeterMod`]s back to what `ovs-ofctl -O OpenFlow13 dump-meters` prints.
//!
//! Input: `meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100` (`band=`
//! is taken for `bands=`, as Open vSwitch does); each `type=` after `bands=` starts a band (`drop`, `dscp_remark` with `prec_level=`, or our
//! `experimenter` with `experimenter=ID`). The dump form, with spaces and newlines for
//! commas, parses too. As in Open vSwitch, a meter to add or modify must say `kbps` or
//! `pktps`, and with `burst` every band must give `burst_size`. Output is Open vSwitch's
//! multi-line form: `meter=1 kbps burst stats bands=` then one `type=drop rate=1000
//! burst_size=100` line per band (`burst_size` with the `burst` flag, or when nonzero).

use super::action::parse_hex_bytes;
use super::error::{Span, TextError};
use super::lexer::{Item, Lexer};
use super::match_format::hex_bytes;
use super::value::*;
use crate::v13::meter_mod::{
    meter_flags as mf, MeterBand, MeterMod, MeterModCommand, OFPM_ALL, OFPM_CONTROLLER,
    OFPM_SLOWPATH,
};

const FLAGS: [(&str, u16); 4] =
    [("kbps", mf::KBPS), ("pktps", mf::PKTPS), ("burst", mf::BURST), ("stats", mf::STATS)];

fn parse_meter_id(sp: Span<'_>) -> Result<u32, TextError> {
    match sp.text {
        "all" => Ok(OFPM_ALL),
        "slowpath" => Ok(OFPM_SLOWPATH),
        "controller" => Ok(OFPM_CONTROLLER),
        _ => Ok(parse_num(sp, u32::MAX as u64, "meter id")? as u32),
    }
}

fn format_meter_id(m: u32) -> String {
    match m {
        OFPM_ALL => "all".into(),
        OFPM_SLOWPATH => "slowpath".into(),
        OFPM_CONTROLLER => "controller".into(),
        n => n.to_string(),
    }
}

/// One band being parsed: its kind and the settings seen so far.
struct BandText<'a> {
    token: Item<'a>,
    kind: &'a str,
    rate: Option<u32>,
    burst_size: Option<u32>,
    prec_level: Option<u8>,
    experimenter: Option<u32>,
    data: Vec<u8>,
}

/// Parses a meter in the syntax of `add-meter` (`Add`), `mod-meter` (`Modify`) or
/// `del-meter` (`Delete`: only `meter=`, default `all`).
pub fn parse_meter_mod(s: &str, command: MeterModCommand) -> Result<MeterMod, TextError> {
    let whole = Span::new(s, 0);
    if let MeterModCommand::Unknown(n) = command {
        return Err(whole.err(format!("meter-mod command {n} has no ovs-ofctl syntax")));
    }
    let is_del = command == MeterModCommand::Delete;
    let mut mm = MeterMod { command, flags: 0, meter_id: OFPM_ALL, bands: Vec::new() };
    let mut have_id = false;
    let mut in_bands = false;
    let mut bands: Vec<BandText<'_>> = Vec::new();
    let mut band_items: Vec<Item<'_>> = Vec::new();
    for it in Lexer::new(whole).collect_all()? {
        if in_bands {
            band_items.push(it);
            continue;
        }
        match it.key.text {
            "meter" => {
                mm.meter_id = parse_meter_id(it.need_value()?)?;
                have_id = true;
            }
            "bands" | "band" => {
                if is_del {
                    return Err(it.err("del-meter takes no bands"));
                }
                in_bands = true;
                if let Some(v) = it.value {
                    band_items.extend(Lexer::new(v).collect_all()?);
                }
            }
            k => match FLAGS.iter().find(|(n, _)| *n == k) {
                Some(&(_, bit)) => {
                    it.no_value()?;
                    if is_del {
                        return Err(it.err("del-meter takes no flags"));
                    }
                    mm.flags |= bit;
                }
                None => return Err(it.err(format!("unknown meter keyword \"{k}\""))),
            },
        }
    }
    for it in band_items {
        let v = it.need_value()?;
        if it.key.text == "type" {
            if !matches!(v.text, "drop" | "dscp_remark" | "experimenter") {
                return Err(v.err(format!(
                    "unknown band type \"{}\" (drop, dscp_remark, experimenter)",
                    v.text
                )));
            }
            bands.push(BandText {
                token: it,
                kind: v.text,
                rate: None,
                burst_size: None,
                prec_level: None,
                experimenter: None,
                data: Vec::new(),
            });
            continue;
        }
        let Some(b) = bands.last_mut() else {
            return Err(it.err("a band must start with type="));
        };
        match it.key.text {
            "rate" => b.rate = Some(parse_num(v, u32::MAX as u64, "rate")? as u32),
            "burst_size" => {
                b.burst_size = Some(parse_num(v, u32::MAX as u64, "burst_size")? as u32)
            }
            "prec_level" if b.kind == "dscp_remark" => {
                b.prec_level = Some(parse_num(v, 255, "prec_level")? as u8)
            }
            "experimenter" if b.kind == "experimenter" => {
                b.experimenter = Some(parse_num(v, u32::MAX as u64, "experimenter")? as u32)
            }
            "data" if b.kind == "experimenter" => b.data = parse_hex_bytes(v)?,
            k => return Err(it.err(format!("\"{k}\" is not a setting of a {} band", b.kind))),
        }
    }
    if !is_del {
        if !have_id {
            return Err(whole.slice(0, 0).err("a meter needs meter=N"));
        }
        if mm.flags & (mf::KBPS | mf::PKTPS) == 0 {
            return Err(whole.slice(0, 0).err("a meter must say kbps or pktps"));
        }
    }
    for b in bands {
        let rate = b.rate.ok_or_else(|| b.token.err("a band needs rate="))?;
        if mm.flags & mf::BURST != 0 && b.burst_size.is_none() {
            return Err(b.token.err("a band needs burst_size= when the meter has the burst flag"));
        }
        let burst_size = b.burst_size.unwrap_or(0);
        mm.bands.push(match b.kind {
            "drop" => MeterBand::Drop { rate, burst_size },
            "dscp_remark" => MeterBand::DscpRemark {
                rate,
                burst_size,
                prec_level: b
                    .prec_level
                    .ok_or_else(|| b.token.err("a dscp_remark band needs prec_level="))?,
            },
            _ => MeterBand::Experimenter {
                rate,
                burst_size,
                experimenter: b
                    .experimenter
                    .ok_or_else(|| b.token.err("an experimenter band needs experimenter="))?,
                data: b.data,
            },
        });
    }
    Ok(mm)
}

/// Prints a meter as `ovs-ofctl -O OpenFlow13 dump-meters` does: the meter line, then
/// one line per band (lines joined by `\n`, no trailing newline). For deletes only
/// `meter=N` is printed.
pub fn format_meter_mod(mm: &MeterMod) -> String {
    let mut s = format!("meter={}", format_meter_id(mm.meter_id));
    if mm.command == MeterModCommand::Delete {
        return s;
    }
    s.push(' ');
    for (n, bit) in FLAGS {
        if mm.flags & bit != 0 {
            s.push_str(n);
            s.push(' ');
        }
    }
    s.push_str("bands=");
    let burst = mm.flags & mf::BURST != 0;
    for b in &mm.bands {
        let (kind, rate, bs) = match b {
            MeterBand::Drop { rate, burst_size } => ("drop", rate, burst_size),
            MeterBand::DscpRemark { rate, burst_size, .. } => ("dscp_remark", rate, burst_size),
            MeterBand::Experimenter { rate, burst_size, .. } => ("experimenter", rate, burst_size),
        };
        s.push_str(&format!("\ntype={kind} rate={rate}"));
        // OVS prints burst_size only under the burst flag; a nonzero size given without
        // the flag is printed too, so the text parses back to the same meter.
        if burst || *bs != 0 {
            s.push_str(&format!(" burst_size={bs}"));
        }
        match b {
            MeterBand::DscpRemark { prec_level, .. } => {
                s.push_str(&format!(" prec_level={prec_level}"))
            }
            MeterBand::Experimenter { experimenter, data, .. } => {
                s.push_str(&format!(" experimenter={experimenter:#x}"));
                if !data.is_empty() {
                    s.push_str(&format!(" data=0x{}", hex_bytes(data)));
                }
            }
            MeterBand::Drop { .. } => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meters_print_like_ovs() {
        #[track_caller]
        fn m(input: &str, printed: &str) {
            let parse = |s: &str| parse_meter_mod(s, MeterModCommand::Add);
            crate::text::tests::assert_prints_as(input, printed, parse, format_meter_mod);
        }
        m(
            "meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100",
            "meter=1 kbps burst stats bands=\ntype=drop rate=1000 burst_size=100",
        );
        m("meter=2,pktps,bands=type=drop,rate=10", "meter=2 pktps bands=\ntype=drop rate=10");
        // Open vSwitch takes `band=` as well.
        m("meter=2,pktps,band=type=drop,rate=10", "meter=2 pktps bands=\ntype=drop rate=10");
        m(
            "meter=4,kbps,burst,bands=type=drop,rate=1000,burst_size=10,type=drop,rate=2000,burst_size=20",
            "meter=4 kbps burst bands=\ntype=drop rate=1000 burst_size=10\ntype=drop rate=2000 burst_size=20",
        );
        m(
            "meter=3,kbps,bands=type=dscp_remark,rate=100,prec_level=1",
            "meter=3 kbps bands=\ntype=dscp_remark rate=100 prec_level=1",
        );
        m(
            "meter=7 pktps stats bands=type=drop rate=5",
            "meter=7 pktps stats bands=\ntype=drop rate=5",
        );
        let mm = parse_meter_mod(
            "meter=1,kbps,bands=type=dscp_remark,rate=5,prec_level=2",
            MeterModCommand::Add,
        )
        .unwrap();
        assert_eq!(mm.bands, vec![MeterBand::DscpRemark { rate: 5, burst_size: 0, prec_level: 2 }]);
        let e =
            parse_meter_mod("meter=1,bands=type=drop,rate=5", MeterModCommand::Add).unwrap_err();
        assert!(e.message.contains("kbps or pktps"));
        let e = parse_meter_mod("meter=1,kbps,burst,bands=type=drop,rate=5", MeterModCommand::Add)
            .unwrap_err();
        assert_eq!((e.pos, e.token.as_str()), (25, "type=drop"));
        let e = parse_meter_mod("meter=1,kbps,bands=type=foo,rate=1", MeterModCommand::Add)
            .unwrap_err();
        assert_eq!((e.pos, e.token.as_str()), (24, "foo"));
        let e = parse_meter_mod("meter=1,kbps,bands=rate=1", MeterModCommand::Add).unwrap_err();
        assert!(e.message.contains("type="));
        let del = parse_meter_mod("meter=5", MeterModCommand::Delete).unwrap();
        assert_eq!(format_meter_mod(&del), "meter=5");
    }
}
