//! The profiler's summary table (`wgc_profile_table`): records grouped by
//! operator or kernel, sorted by GPU time.

use std::collections::HashMap;
use std::fmt::Write;

/// A record as the table reads it.
pub struct Row {
    pub op: String,
    pub kernel: String,
    pub call: u64,
    pub flops: u64,
    pub bytes: u64,
    pub host_ns: u64,
    /// `None` where the time was not measured.
    pub gpu_ns: Option<u64>,
    pub status: u32,
}

#[derive(Default)]
struct Group {
    commands: u64,
    /// Distinct calls, with the FLOPs, bytes and host time each counted once.
    calls: Vec<u64>,
    flops: u64,
    bytes: u64,
    host_ns: u64,
    gpu_ns: u64,
    unmeasured: u64,
}

fn cell(v: Option<f64>, precision: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.precision$}"))
}

pub fn render(rows: &[Row], by_kernel: bool, max_rows: usize) -> String {
    let mut groups: HashMap<&str, Group> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for r in rows {
        let key = if by_kernel { r.kernel.as_str() } else { r.op.as_str() };
        let g = groups.entry(key).or_insert_with(|| {
            order.push(key);
            Group::default()
        });
        g.commands += 1;
        match r.gpu_ns {
            Some(ns) => g.gpu_ns += ns,
            None => g.unmeasured += 1,
        }
        // A call's commands are consecutive: count its FLOPs, bytes and host time once.
        if g.calls.last() != Some(&r.call) || r.call == u64::MAX {
            g.calls.push(r.call);
            g.flops += r.flops;
            g.bytes += r.bytes;
            g.host_ns += r.host_ns;
        }
    }
    let measured = |g: &Group| g.unmeasured == 0;
    let total_gpu: u64 = groups.values().filter(|g| measured(g)).map(|g| g.gpu_ns).sum();
    order.sort_by(|a, b| {
        let (ga, gb) = (&groups[a], &groups[b]);
        (gb.gpu_ns, gb.commands).cmp(&(ga.gpu_ns, ga.commands))
    });
    let name_width = order.iter().map(|k| k.len()).max().unwrap_or(0).clamp(8, 60);
    let mut out = String::new();
    let label = if by_kernel { "kernel" } else { "operator" };
    let _ = writeln!(
        out,
        "{label:<name_width$}  {:>6}  {:>8}  {:>12}  {:>6}  {:>11}  {:>12}  {:>9}  {:>8}",
        "calls", "commands", "GPU total ms", "GPU %", "GPU mean us", "host mean us", "GFLOP/s", "GB/s"
    );
    let shown = if max_rows == 0 { order.len() } else { max_rows.min(order.len()) };
    for key in &order[..shown] {
        let g = &groups[key];
        let ok = measured(g);
        let gpu_s = g.gpu_ns as f64 * 1e-9;
        let rate = |amount: u64| (ok && amount > 0 && g.gpu_ns > 0).then(|| amount as f64 / gpu_s * 1e-9);
        let name: String = if key.len() > 60 { format!("{}...", &key[..57]) } else { key.to_string() };
        let _ = writeln!(
            out,
            "{name:<name_width$}  {:>6}  {:>8}  {:>12}  {:>6}  {:>11}  {:>12.2}  {:>9}  {:>8}",
            g.calls.len(),
            g.commands,
            cell(ok.then_some(g.gpu_ns as f64 * 1e-6), 3),
            cell((ok && total_gpu > 0).then(|| g.gpu_ns as f64 * 100.0 / total_gpu as f64), 1),
            cell(ok.then(|| g.gpu_ns as f64 * 1e-3 / g.calls.len() as f64), 2),
            g.host_ns as f64 * 1e-3 / g.calls.len() as f64,
            cell(rate(g.flops), 1),
            cell(rate(g.bytes), 1),
        );
    }
    if shown < order.len() {
        let _ = writeln!(out, "({} more rows)", order.len() - shown);
    }
    let unmeasured: u64 = groups.values().map(|g| g.unmeasured).sum();
    let calls: usize = groups.values().map(|g| g.calls.len()).sum();
    let _ = writeln!(
        out,
        "{:<name_width$}  {:>6}  {:>8}  {:>12}",
        "total",
        calls,
        rows.len(),
        cell((unmeasured == 0).then_some(total_gpu as f64 * 1e-6), 3)
    );
    if unmeasured > 0 {
        let no_timestamps = rows.iter().filter(|r| r.gpu_ns.is_none() && r.status == 1).count();
        let _ = writeln!(
            out,
            "GPU time not measured for {unmeasured} of {} commands ({no_timestamps} because the adapter has no \
             timestamp queries, {} not run); rows with any of them show '-'",
            rows.len(),
            unmeasured as usize - no_timestamps
        );
    }
    out
}
