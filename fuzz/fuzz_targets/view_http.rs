//! Any bytes as a request to `baker view`'s server: a request within the
//! limits, or a refusal with a 4xx/5xx status, never a panic and never a
//! body past the limit.
#![no_main]

use baker_tools::view::http::{self, Incoming};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let got = http::read_request(&mut &data[..]);
    if let Some(status) = got.refused() {
        assert!((400..600).contains(&status), "{status}");
    }
    match got {
        Incoming::Request(method, target, body) => {
            assert!(!method.is_empty());
            assert!(target.len() <= http::MAX_URL);
            assert!(body.len() <= http::MAX_BODY);
        }
        Incoming::Refused(_) => {}
        Incoming::Gone => assert!(data.is_empty()),
    }
});
