//! Listing adapters prints nothing: a compute-only library must not reach
//! window-system code (on a machine without a desktop session, Mesa's
//! device-select layer made libwayland print "error: XDG_RUNTIME_DIR is
//! invalid or not set in the environment." twice). The check runs this test
//! binary again as a child without XDG_RUNTIME_DIR and reads its stderr.

use std::process::Command;

const CHILD: &str = "WGC_QUIET_START_CHILD";

#[test]
fn listing_adapters_prints_nothing_without_a_desktop_session() {
    if std::env::var_os(CHILD).is_some() {
        let adapters = wgcompute::runtime::instance::instance().adapters().expect("adapters");
        assert!(!adapters.is_empty(), "no adapter found");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "listing_adapters_prints_nothing_without_a_desktop_session", "--nocapture"])
        .env(CHILD, "1")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .expect("run the test binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    let noise: Vec<&str> =
        stderr.lines().filter(|l| l.contains("XDG_RUNTIME_DIR") || l.starts_with("error:")).collect();
    assert!(noise.is_empty(), "listing adapters wrote to stderr:\n{}", noise.join("\n"));
}
