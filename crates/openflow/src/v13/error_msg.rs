//! `OFPT_ERROR` (OpenFlow 1.3) and `OFPT_EXPERIMENTER` bodies.
//!
//! Error wire form: header, `type:u16, code:u16, data` (`ofp_error_msg`), or for type
//! `0xffff` (`OFPET_EXPERIMENTER`) `type:u16, exp_type:u16, experimenter:u32, data`
//! (`ofp_error_experimenter_msg`). `data` runs to the end of the message; for most
//! errors it is the start of the offending request.
//!
//! Experimenter message wire form: header, `experimenter:u32, exp_type:u32, data`.

use crate::error::{error_type, ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

/// An `OFPT_ERROR` body.
///
/// Invariant for round trips: `Standard::kind.ty` is never `0xffff` (that type is the
/// experimenter form).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ErrorMsg {
    Standard { kind: ErrorKind, data: Vec<u8> },
    Experimenter { exp_type: u16, experimenter: u32, data: Vec<u8> },
}

impl ErrorMsg {
    pub fn decode(r: &mut Reader) -> Result<ErrorMsg, OfpError> {
        let ty = r.u16()?;
        if ty == error_type::EXPERIMENTER {
            let exp_type = r.u16()?;
            let experimenter = r.u32()?;
            Ok(ErrorMsg::Experimenter { exp_type, experimenter, data: r.take_rest().to_vec() })
        } else {
            let code = r.u16()?;
            Ok(ErrorMsg::Standard { kind: ErrorKind::new(ty, code), data: r.take_rest().to_vec() })
        }
    }

    pub fn encode(&self, w: &mut Writer) {
        match self {
            ErrorMsg::Standard { kind, data } => {
                w.u16(kind.ty);
                w.u16(kind.code);
                w.bytes(data);
            }
            ErrorMsg::Experimenter { exp_type, experimenter, data } => {
                w.u16(error_type::EXPERIMENTER);
                w.u16(*exp_type);
                w.u32(*experimenter);
                w.bytes(data);
            }
        }
    }
}

record! {
    /// An `OFPT_EXPERIMENTER` body: the experimenter id, its message type, and the rest.
    #[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
    pub struct Experimenter {
        pub experimenter: u32,
        pub exp_type: u32,
        pub data: Vec<u8> [rest],
    }
}

/// proptest strategy for error messages.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    fn arb_data() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..70)
    }

    pub fn arb_error_msg() -> impl Strategy<Value = ErrorMsg> {
        prop_oneof![
            (0u16..0xffff, any::<u16>(), arb_data()).prop_map(|(ty, code, data)| {
                ErrorMsg::Standard { kind: ErrorKind::new(ty, code), data }
            }),
            (any::<u16>(), any::<u32>(), arb_data()).prop_map(|(exp_type, experimenter, data)| {
                ErrorMsg::Experimenter { exp_type, experimenter, data }
            }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{assert_refused, assert_roundtrip, encoded};
    use proptest::prelude::*;

    #[test]
    fn spec_bytes() {
        let bytes = [0, 5, 0, 6, 4, 14, 0, 8];
        let e = ErrorMsg::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            e,
            ErrorMsg::Standard {
                kind: ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND,
                data: vec![4, 14, 0, 8]
            }
        );
        assert_eq!(encoded(|w| e.encode(w)), bytes);

        let bytes = [0xff, 0xff, 0, 7, 0, 0, 0x23, 0x20, 1, 2];
        let e = ErrorMsg::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            e,
            ErrorMsg::Experimenter { exp_type: 7, experimenter: 0x2320, data: vec![1, 2] }
        );
        assert_eq!(encoded(|w| e.encode(w)), bytes);
    }

    #[test]
    fn truncated() {
        let cases: &[&[u8]] = &[&[0, 1, 0], &[0xff, 0xff, 0, 1, 0, 0, 0]];
        assert_refused(cases, ErrorMsg::decode, ErrorKind::BAD_REQUEST_BAD_LEN);
        let e = Experimenter::decode(&mut Reader::new(&[0, 0, 0, 1, 0, 0, 0])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    proptest! {
        #[test]
        fn roundtrip(e in strategy::arb_error_msg(), x in Experimenter::arb()) {
            assert_roundtrip(&e, ErrorMsg::encode, ErrorMsg::decode);
            assert_roundtrip(&x, Experimenter::encode, Experimenter::decode);
        }
    }
}
