//! Binary decode: any bytes either fail with an OpenFlow error or decode to a message
//! whose encoding decodes to the same message. Validation never panics either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::Frame;

fuzz_target!(|data: &[u8]| {
    let _ = Frame::decode_validated(data);
    if let Ok(frame) = Frame::decode(data) {
        let bytes = frame.encode().expect("a decoded message re-encodes");
        let again = Frame::decode(&bytes).expect("re-encoded message decodes");
        assert_eq!(again, frame);
    }
});
