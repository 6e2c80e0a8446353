//! Fuzz target `config`: any bytes through the configuration parser and
//! validator (`spec::from_source`), the start-plan printer (`plan::render`) and
//! the error locator (`locate::locate`). Must end in an error or a valid config,
//! never a panic; the invariants checked are in `../common/config_checks.rs`,
//! shared with `tests/config_fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common/config_checks.rs"]
mod config_checks;

fuzz_target!(|data: &[u8]| {
    config_checks::check_bytes(data);
});
