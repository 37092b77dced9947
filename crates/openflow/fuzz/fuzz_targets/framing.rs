//! Stream framing: feeding bytes in arbitrary chunks never panics, and every message the
//! framer yields has the length its header claims.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::framing::Framer;

fuzz_target!(|data: &[u8]| {
    let mut f = Framer::new();
    let (cuts, stream) = data.split_at(data.len().min(8));
    let mut pos = 0;
    let mut i = 0;
    while pos < stream.len() {
        let n = (cuts.get(i % cuts.len().max(1)).copied().unwrap_or(7) as usize % 64 + 1)
            .min(stream.len() - pos);
        i += 1;
        f.push(&stream[pos..pos + n]);
        pos += n;
        loop {
            match f.next_message() {
                Ok(Some(m)) => {
                    assert_eq!(u16::from_be_bytes([m[2], m[3]]) as usize, m.len());
                    let _ = openflow::Frame::decode(m);
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
});
