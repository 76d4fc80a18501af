//! Any text as a `kiln.toml`: a project file or an error naming the file,
//! never a panic; what parses applies to the settings, and its globs match
//! any name without blowing up.
#![no_main]

use kiln_baker::config::ProjectConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = std::path::Path::new("kiln.toml");
    match ProjectConfig::parse(text, path) {
        Ok(c) => {
            let s = c.apply(kiln_baker::BakeSettings::default());
            let _ = s.fingerprint();
            for r in &c.rules {
                let _ = r.matches(text);
                let _ = r.settings.shape_settings(s.shape_settings());
            }
            let _ = c.watch.wants(text);
        }
        Err(e) => assert!(e.to_string().starts_with("kiln.toml: ")),
    }
});
