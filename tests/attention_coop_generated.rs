//! shaders/attention_coop.wgsl is written out fragment by fragment by
//! tools/gen_attention_coop_wgsl.py: the checked-in shader must be its
//! output.

use std::process::Command;

#[test]
fn the_tensor_core_attention_is_the_generators_output() {
    same_as_generated(&[], "shaders/attention_coop.wgsl");
}

#[test]
fn the_subgroup_barrier_attention_is_the_generators_output() {
    same_as_generated(&["--subgroup-barriers"], "shaders/attention_coop_sg.wgsl");
}

fn same_as_generated(args: &[&str], file: &str) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/tools/gen_attention_coop_wgsl.py"))
        .args(args)
        .output()
        .expect("python3 runs tools/gen_attention_coop_wgsl.py");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let generated = String::from_utf8(out.stdout).unwrap();
    let checked_in = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
    assert!(
        generated == checked_in,
        "{file} differs from the generator's output: run\n  \
         python3 tools/gen_attention_coop_wgsl.py {} > {file}",
        args.join(" ")
    );
}
