//! Give the shared library a versioned SONAME on Linux so that installed
//! programs link against `libwgcompute.so.0` and survive compatible updates.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os == "linux" || os == "android" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libwgcompute.so.0");
    }
}
