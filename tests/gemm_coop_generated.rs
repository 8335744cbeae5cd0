//! shaders/gemm_coop_f16.wgsl and shaders/conv_coop_f16.wgsl are written out
//! fragment by fragment by tools/gen_gemm_coop_wgsl.py: the checked-in
//! shaders must be its output.

use std::process::Command;

#[test]
fn the_tensor_core_gemm_is_the_generators_output() {
    check_generated(&[], "gemm_coop_f16.wgsl");
}

#[test]
fn the_tensor_core_convolution_is_the_generators_output() {
    check_generated(&["--conv"], "conv_coop_f16.wgsl");
}

fn check_generated(args: &[&str], file: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/gen_gemm_coop_wgsl.py"))
        .args(args)
        .output()
        .expect("python3 runs tools/gen_gemm_coop_wgsl.py");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    let checked_in = std::fs::read_to_string(format!("{root}/shaders/{file}")).unwrap();
    assert!(
        generated == checked_in,
        "shaders/{file} differs from the generator's output: run\n  python3 tools/gen_gemm_coop_wgsl.py {} > shaders/{file}",
        args.join(" ")
    );
}
