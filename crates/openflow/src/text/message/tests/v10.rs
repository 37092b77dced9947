//! OpenFlow 1.0 messages printed on one line: hello and vendor.

use super::*;

#[test]
fn v10_messages() {
    assert_eq!(p10(2, M10::Hello(vec![])), "OFPT_HELLO (OF1.0) (xid=0x2):");
    assert_eq!(
        p10(2, M10::Vendor(m10::Vendor { vendor: 0x2320, data: vec![] })),
        "OFPT_VENDOR (OF1.0) (xid=0x2): vendor=0x00002320 data_len=0"
    );
}
