// Copy a launch's indirect workgroup counts into the stream's own argument
// buffer, or zeros if any count exceeds the adapter's per-dimension limit:
// the launch that reads them then runs no workgroups instead of a grid the
// GPU cannot run (a count of 2^32-1 would keep it busy for minutes).

struct Params {
    first: u32, // index of the x count in `counts`
    limit: u32, // max_compute_workgroups_per_dimension
}

@group(0) @binding(0) var<storage, read> counts: array<u32>;
@group(0) @binding(1) var<storage, read_write> args: array<u32, 3>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(1)
fn check_counts() {
    let c = vec3<u32>(counts[p.first], counts[p.first + 1u], counts[p.first + 2u]);
    if (any(c > vec3<u32>(p.limit))) {
        args = array<u32, 3>(0u, 0u, 0u);
    } else {
        args = array<u32, 3>(c.x, c.y, c.z);
    }
}
