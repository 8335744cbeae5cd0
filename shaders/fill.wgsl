// Fill a range of 32-bit words with one value.
// Launched as a 2-D grid of 256-wide workgroups so that counts above
// 65535 * 256 words fit in the per-dimension limit.

struct Params {
    first_word: u32,
    count: u32,
    value: u32,
    row_words: u32, // words covered by one row of workgroups (groups_x * 256)
}

@group(0) @binding(0) var<storage, read_write> words: array<u32>;
@group(0) @binding(1) var<uniform> p: Params;

@compute @workgroup_size(256)
fn fill_words(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row_words + gid.x;
    if (i < p.count) {
        words[p.first_word + i] = p.value;
    }
}
