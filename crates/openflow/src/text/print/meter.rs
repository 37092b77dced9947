//! Meters: configurations (`dump-meters`), counters (`meter-stats`), features
//! (`meter-features`) and meter-mods (inside errors), as Open vSwitch's `ofp-meter.c`
//! prints them: a meter's bands each on their own line, meters separated by a blank
//! line.

use super::{bit_names, duration};
use crate::v13::meter_mod::{
    meter_flags as mf, MeterBand, MeterMod, MeterModCommand, OFPM_ALL, OFPM_CONTROLLER, OFPM_MAX,
    OFPM_SLOWPATH,
};
use crate::v13::multipart::{MeterConfig, MeterFeatures, MeterStats};

/// `meter=5`, `meter:all`, ... with `sep` between the word and the id.
pub fn meter_id(id: u32, sep: char) -> String {
    if id <= OFPM_MAX {
        return format!("meter{sep}{id}");
    }
    let name = match id {
        OFPM_SLOWPATH => "slowpath",
        OFPM_CONTROLLER => "controller",
        OFPM_ALL => "all",
        _ => "unknown",
    };
    format!("meter{sep}{name}")
}

/// The flag words of a meter, each followed by a space.
pub fn meter_flag_words(flags: u16) -> String {
    let mut s = String::new();
    for (bit, n) in
        [(mf::KBPS, "kbps"), (mf::PKTPS, "pktps"), (mf::BURST, "burst"), (mf::STATS, "stats")]
    {
        if flags & bit != 0 {
            s.push_str(n);
            s.push(' ');
        }
    }
    let rest = flags & !(mf::KBPS | mf::PKTPS | mf::BURST | mf::STATS);
    if rest != 0 {
        s.push_str(&format!("flags:0x{rest:x} "));
    }
    s
}

/// One band: `type=drop rate=1000 burst_size=100` (burst size only with the burst
/// flag, as Open vSwitch).
pub fn band_text(flags: u16, b: &MeterBand) -> String {
    let (ty, prec) = match b {
        MeterBand::Drop { .. } => ("drop".to_string(), None),
        MeterBand::DscpRemark { prec_level, .. } => ("dscp_remark".to_string(), Some(*prec_level)),
        MeterBand::Experimenter { .. } => ("65535".to_string(), None),
    };
    let mut s = format!("type={ty} rate={}", b.rate());
    if flags & mf::BURST != 0 {
        s.push_str(&format!(" burst_size={}", b.burst_size()));
    }
    if let Some(p) = prec {
        s.push_str(&format!(" prec_level={p}"));
    }
    s
}

/// `meter=1 kbps burst bands=` and one line per band, ending in a newline.
fn config_text(id: u32, flags: u16, bands: &[MeterBand]) -> String {
    let mut s = format!("{} {}bands=", meter_id(id, '='), meter_flag_words(flags));
    for b in bands {
        s.push('\n');
        s.push_str(&band_text(flags, b));
    }
    s.push('\n');
    s
}

pub(super) fn meter_configs(list: &[MeterConfig]) -> String {
    list.iter().map(|m| format!("\n{}", config_text(m.meter_id, m.flags, &m.bands))).collect()
}

/// One meter's counters (the meter line, then one line per band).
pub fn meter_stats_text(m: &MeterStats) -> String {
    let mut s = format!(
        "{} flow_count:{} packet_in_count:{} byte_in_count:{} duration:{} bands:\n",
        meter_id(m.meter_id, ':'),
        m.flow_count,
        m.packet_in_count,
        m.byte_in_count,
        duration(m.duration_sec, m.duration_nsec)
    );
    for (i, b) in m.band_stats.iter().enumerate() {
        s.push_str(&format!(
            "{i}: packet_count:{} byte_count:{}\n",
            b.packet_band_count, b.byte_band_count
        ));
    }
    s
}

pub(super) fn meter_stats(list: &[MeterStats]) -> String {
    list.iter().map(|m| format!("\n{}", meter_stats_text(m))).collect()
}

pub(super) fn meter_features(f: &MeterFeatures) -> String {
    let bands = |bit: u32| match bit {
        2 => Some("drop"),
        4 => Some("dscp_remark"),
        _ => None,
    };
    let caps = |bit: u32| match bit {
        1 => Some("kbps"),
        2 => Some("pktps"),
        4 => Some("burst"),
        8 => Some("stats"),
        _ => None,
    };
    format!(
        "\nmax_meter:{} max_bands:{} max_color:{}\nband_types: {}\ncapabilities: {}\n",
        f.max_meter,
        f.max_bands,
        f.max_color,
        bit_names(f.band_types, bands),
        bit_names(f.capabilities, caps)
    )
}

pub(super) fn meter_mod(m: &MeterMod) -> String {
    let cmd = match m.command {
        MeterModCommand::Add => " ADD ".to_string(),
        MeterModCommand::Modify => " MOD ".into(),
        MeterModCommand::Delete => " DEL ".into(),
        MeterModCommand::Unknown(n) => format!(" cmd:{n} "),
    };
    format!("{cmd}{}", config_text(m.meter_id, m.flags, &m.bands))
}
