//! Probe: what handing GEMMs from a Vulkan device to cuBLASLt costs on NVIDIA, with no
//! build-time dependency on CUDA. Vulkan allocates and exports memory and a timeline
//! semaphore; libcuda and libcublasLt are loaded at run time when present. Each result is
//! one JSON line on stdout (see bench/handoff/README.md).
//!
//! Usage: handoff_probe [--rounds N] [--reps N] [--warmup N] [--shapes MxNxK,...]
//! Status: 0 when every check that could run passed (also where libcuda or libcublasLt is
//! absent), 1 when a check failed or a step failed unexpectedly.

#![deny(clippy::undocumented_unsafe_blocks)]

mod checks;
mod cublaslt;
mod cuda;
mod dl;
mod gemm;
mod handoff;
mod json;
mod numbers;
mod shared;
mod suite;
mod vulkan;

use cublaslt::Lt;
use cuda::Cuda;
use dl::Library;
use gemm::Shape;
use json::{skip, Line};
use numbers::Rng;
use vulkan::{version_string, Vk};

/// Staging chunk for host transfers through Vulkan.
const STAGING_BYTES: u64 = 64 << 20;

struct Options {
    rounds: usize,
    reps: usize,
    warmup: usize,
    shapes: Vec<Shape>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        rounds: 200,
        reps: 20,
        warmup: 10,
        shapes: [(2048, 4096, 4096), (2048, 11008, 4096), (2048, 4096, 11008), (4096, 4096, 4096), (8192, 8192, 8192)]
            .iter()
            .map(|&(m, n, k)| Shape { m, n, k })
            .collect(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut iter = args.iter();
    while let Some(flag) = iter.next() {
        let value = iter.next().ok_or(format!("{flag} needs a value"))?;
        let count = || value.parse::<usize>().map_err(|e| format!("{flag} {value}: {e}"));
        match flag.as_str() {
            "--rounds" => options.rounds = count()?.max(4),
            "--reps" => options.reps = count()?.max(1),
            "--warmup" => options.warmup = count()?,
            "--shapes" => options.shapes = parse_shapes(value)?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(options)
}

fn parse_shapes(text: &str) -> Result<Vec<Shape>, String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let dims: Vec<usize> = s
                .split('x')
                .map(|d| d.parse::<usize>().map_err(|e| format!("shape {s}: {e}")))
                .collect::<Result<_, _>>()?;
            match dims[..] {
                [m, n, k] if m > 0 && n > 0 && k > 0 => Ok(Shape { m, n, k }),
                _ => Err(format!("shape {s}: expected MxNxK")),
            }
        })
        .collect()
}

fn main() {
    let code = match run() {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            Line::new("error").str("message", &e).print();
            1
        }
    };
    std::process::exit(code);
}

fn run() -> Result<bool, String> {
    let options = parse_options()?;
    let vk = match Vk::new() {
        Ok(vk) => vk,
        Err(e) => {
            skip("vulkan", &e);
            return Ok(true);
        }
    };
    let info = &vk.info;
    Line::new("device")
        .str("name", &info.name)
        .int("vendor_id", info.vendor_id as i64)
        .str("api", &version_string(info.api_version))
        .int("driver_version", info.driver_version as i64)
        .bool("VK_KHR_external_memory_fd", info.has_memory_fd)
        .bool("VK_KHR_external_semaphore_fd", info.has_semaphore_fd)
        .bool("timeline_semaphore", info.has_timeline)
        .bool("buffer_export_opaque_fd", info.buffer_exportable)
        .bool("buffer_dedicated_only", info.buffer_dedicated_only)
        .bool("timeline_export_opaque_fd", info.timeline_exportable)
        .print();
    if !info.has_memory_fd || !info.buffer_exportable {
        skip(
            "vulkan",
            &format!("{} cannot export buffer memory as an opaque fd (VK_KHR_external_memory_fd)", info.name),
        );
        return Ok(true);
    }
    let mut staging = vk.staging(STAGING_BYTES)?;
    let mut ok = checks::vulkan_export(&vk, &mut staging)?;
    let semaphores = info.has_semaphore_fd && info.timeline_exportable;
    if !semaphores {
        skip(
            "vulkan",
            &format!(
                "{} cannot export a timeline semaphore as an opaque fd (VK_KHR_external_semaphore_fd); \
                 the handoff loops will not run",
                info.name
            ),
        );
    }
    if info.has_timeline {
        ok &= vulkan_chains(&vk, options.rounds)?;
    }

    let cuda_library = match Cuda::load() {
        Ok(library) => library,
        Err(e) => {
            skip("cuda", &format!("libcuda.so.1 not found ({e})"));
            return Ok(ok);
        }
    };
    let cuda = match Cuda::new(cuda_library, &info.device_uuid) {
        Ok(cuda) => cuda,
        Err(e) if info.vendor_id != 0x10de => {
            skip("cuda", &format!("the Vulkan device is not NVIDIA and CUDA did not start: {e}"));
            return Ok(ok);
        }
        Err(e) => return Err(e),
    };
    Line::new("cuda")
        .str("device", &cuda.device_name)
        .int("driver_version", cuda.driver_version as i64)
        .bool("same_device_as_vulkan", cuda.uuid_matched)
        .print();
    ok &= checks::shared_memory(&vk, &cuda, &mut staging)?;

    let lt_library = Library::open(&Lt::candidates());
    let lt = match &lt_library {
        Ok(library) => Some(Lt::load(library, &cuda)?),
        Err(e) => {
            skip("cublaslt", &format!("libcublasLt not found ({e}); set WGC_CUBLASLT to its path"));
            None
        }
    };
    let mut rng = Rng::new(2026);
    if let Some(lt) = &lt {
        Line::new("cublaslt").str("library", &lt.library_name).int("version", lt.version as i64).print();
        for &shape in &options.shapes {
            ok &= gemm::measure(&vk, &cuda, lt, &mut staging, shape, (options.warmup, options.reps), &mut rng)?.ok;
        }
    }
    if semaphores {
        ok &= suite::run(&vk, &cuda, lt.as_ref(), &mut staging, options.rounds, &mut rng)?;
    }
    Ok(ok)
}

/// Vulkan alone (runs without CUDA too): submits chained on a timeline semaphore, with a
/// 4-byte fill and with a 16 MiB fill per submit.
fn vulkan_chains(vk: &Vk, rounds: usize) -> Result<bool, String> {
    let timeline = vk.timeline(false)?;
    let target = vk.export_buffer(16 << 20)?;
    let buffer = target.buffer;
    let tiny = vk.record(|device, cb| {
        // SAFETY: live buffer, 4-byte region in bounds, `cb` recording.
        unsafe { device.cmd_fill_buffer(cb, buffer, 0, 4, 1) }
    })?;
    let big = vk.record(|device, cb| {
        // SAFETY: live buffer, whole 16 MiB (a multiple of 4), `cb` recording.
        unsafe { device.cmd_fill_buffer(cb, buffer, 0, 16 << 20, 2) }
    })?;
    handoff::vulkan_alone(vk, &timeline, rounds / 4, Some(tiny))?;
    handoff::vulkan_alone(vk, &timeline, rounds, None)?.print("vulkan_alone", "empty_submit", "none");
    handoff::vulkan_alone(vk, &timeline, rounds, Some(tiny))?.print("vulkan_alone", "fill_4_bytes", "none");
    handoff::vulkan_alone(vk, &timeline, rounds, Some(big))?.print("vulkan_alone", "fill_16MiB", "none");
    vk.idle()?;
    vk.free(&[tiny, big]);
    Ok(true)
}
