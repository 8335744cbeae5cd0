//! shaders/attention_coop.wgsl is written out fragment by fragment by
//! tools/gen_attention_coop_wgsl.py: the checked-in shader must be its
//! output.

use std::process::Command;

#[test]
fn the_tensor_core_attention_is_the_generators_output() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/gen_attention_coop_wgsl.py"))
        .output()
        .expect("python3 runs tools/gen_attention_coop_wgsl.py");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    let checked_in = std::fs::read_to_string(format!("{root}/shaders/attention_coop.wgsl")).unwrap();
    assert!(
        generated == checked_in,
        "shaders/attention_coop.wgsl differs from the generator's output: run\n  \
         python3 tools/gen_attention_coop_wgsl.py > shaders/attention_coop.wgsl"
    );
}
