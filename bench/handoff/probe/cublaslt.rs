//! cuBLASLt, loaded at run time (WGC_CUBLASLT, else libcublasLt.so.13/.12/.so), for
//! C = A B^T in f16 with f32 accumulation: A (M, K) row-major, B (N, K) row-major as
//! nn.Linear stores its weight, C (M, N) row-major. Declarations from cublasLt.h.

use crate::cuda::{CuDevicePtr, CuStream, Cuda, DeviceAlloc};
use crate::dl::Library;
use std::ffi::{c_char, c_int, c_void, CStr};

type Status = c_int;
type Handle = *mut c_void;
type MatmulDesc = *mut c_void;
type MatrixLayout = *mut c_void;
type Preference = *mut c_void;

const CUBLAS_STATUS_SUCCESS: Status = 0;
const CUDA_R_16F: c_int = 2;
const CUDA_R_32F: c_int = 0;
const CUBLAS_COMPUTE_32F: c_int = 68;
const CUBLASLT_MATMUL_DESC_TRANSA: c_int = 3;
const CUBLASLT_MATMUL_DESC_TRANSB: c_int = 4;
const CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: c_int = 1;
const CUBLAS_OP_N: i32 = 0;
const CUBLAS_OP_T: i32 = 1;

/// Workspace offered to the heuristic, as PyTorch gives cuBLASLt on Hopper.
pub const WORKSPACE_BYTES: usize = 32 << 20;

/// cublasLtMatmulAlgo_t
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Algo {
    data: [u64; 8],
}

/// cublasLtMatmulHeuristicResult_t
#[repr(C)]
#[derive(Clone, Copy)]
pub struct HeuristicResult {
    algo: Algo,
    workspace_size: usize,
    state: Status,
    waves_count: f32,
    reserved: [c_int; 4],
}

const _: () = assert!(std::mem::size_of::<HeuristicResult>() == 96);

struct Api {
    get_version: unsafe extern "C" fn() -> usize,
    get_status_string: Option<unsafe extern "C" fn(Status) -> *const c_char>,
    create: unsafe extern "C" fn(*mut Handle) -> Status,
    destroy: unsafe extern "C" fn(Handle) -> Status,
    desc_create: unsafe extern "C" fn(*mut MatmulDesc, c_int, c_int) -> Status,
    desc_destroy: unsafe extern "C" fn(MatmulDesc) -> Status,
    desc_set: unsafe extern "C" fn(MatmulDesc, c_int, *const c_void, usize) -> Status,
    layout_create: unsafe extern "C" fn(*mut MatrixLayout, c_int, u64, u64, i64) -> Status,
    layout_destroy: unsafe extern "C" fn(MatrixLayout) -> Status,
    pref_create: unsafe extern "C" fn(*mut Preference) -> Status,
    pref_destroy: unsafe extern "C" fn(Preference) -> Status,
    pref_set: unsafe extern "C" fn(Preference, c_int, *const c_void, usize) -> Status,
    heuristic: unsafe extern "C" fn(
        Handle,
        MatmulDesc,
        MatrixLayout,
        MatrixLayout,
        MatrixLayout,
        MatrixLayout,
        Preference,
        c_int,
        *mut HeuristicResult,
        *mut c_int,
    ) -> Status,
    matmul: unsafe extern "C" fn(
        Handle,
        MatmulDesc,
        *const c_void,
        *const c_void,
        MatrixLayout,
        *const c_void,
        MatrixLayout,
        *const c_void,
        *const c_void,
        MatrixLayout,
        *mut c_void,
        MatrixLayout,
        *const Algo,
        *mut c_void,
        usize,
        CuStream,
    ) -> Status,
}

pub struct Lt<'a> {
    api: Api,
    handle: Handle,
    cuda: &'a Cuda,
    workspace: DeviceAlloc<'a>,
    pub library_name: String,
    pub version: usize,
}

/// One product's descriptors and the heuristic's first algorithm.
pub struct Plan<'a> {
    lt: &'a Lt<'a>,
    desc: MatmulDesc,
    /// The weight B seen column-major: K x N, transposed by the product.
    weight_layout: MatrixLayout,
    /// The activation A seen column-major: K x M.
    input_layout: MatrixLayout,
    /// C seen column-major: N x M.
    output_layout: MatrixLayout,
    result: HeuristicResult,
    pub algorithms_found: i32,
}

impl<'a> Lt<'a> {
    pub fn candidates() -> Vec<String> {
        match std::env::var("WGC_CUBLASLT") {
            Ok(path) if !path.is_empty() => vec![path],
            _ => ["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"].iter().map(|s| s.to_string()).collect(),
        }
    }

    pub fn load(library: &Library, cuda: &'a Cuda) -> Result<Lt<'a>, String> {
        // SAFETY: each type is the cublasLt.h declaration of the named symbol.
        let api = unsafe {
            Api {
                get_version: library.sym("cublasLtGetVersion")?,
                get_status_string: library.sym("cublasLtGetStatusString").ok(),
                create: library.sym("cublasLtCreate")?,
                destroy: library.sym("cublasLtDestroy")?,
                desc_create: library.sym("cublasLtMatmulDescCreate")?,
                desc_destroy: library.sym("cublasLtMatmulDescDestroy")?,
                desc_set: library.sym("cublasLtMatmulDescSetAttribute")?,
                layout_create: library.sym("cublasLtMatrixLayoutCreate")?,
                layout_destroy: library.sym("cublasLtMatrixLayoutDestroy")?,
                pref_create: library.sym("cublasLtMatmulPreferenceCreate")?,
                pref_destroy: library.sym("cublasLtMatmulPreferenceDestroy")?,
                pref_set: library.sym("cublasLtMatmulPreferenceSetAttribute")?,
                heuristic: library.sym("cublasLtMatmulAlgoGetHeuristic")?,
                matmul: library.sym("cublasLtMatmul")?,
            }
        };
        let workspace = cuda.alloc(WORKSPACE_BYTES)?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the CUDA context is current on this thread.
        let status = unsafe { (api.create)(&mut handle) };
        // SAFETY: takes no arguments.
        let version = unsafe { (api.get_version)() };
        let lt = Lt { api, handle, cuda, workspace, library_name: library.name.clone(), version };
        lt.check(status, "cublasLtCreate")?;
        Ok(lt)
    }

    fn check(&self, status: Status, what: &str) -> Result<(), String> {
        if status == CUBLAS_STATUS_SUCCESS {
            return Ok(());
        }
        let text = self
            .api
            .get_status_string
            // SAFETY: returns a static NUL-terminated string.
            .map(|f| unsafe { CStr::from_ptr(f(status)) }.to_string_lossy().into_owned())
            .unwrap_or_default();
        Err(format!("{what}: cuBLAS status {status} {text}"))
    }

    /// Descriptors and algorithm for C (M, N) = A (M, K) B (N, K)^T, all f16 row-major.
    pub fn plan(&'a self, m: u64, n: u64, k: u64) -> Result<Plan<'a>, String> {
        let mut plan = Plan {
            lt: self,
            desc: std::ptr::null_mut(),
            weight_layout: std::ptr::null_mut(),
            input_layout: std::ptr::null_mut(),
            output_layout: std::ptr::null_mut(),
            // SAFETY: a plain-data C struct for which all zero bytes are valid.
            result: unsafe { std::mem::zeroed() },
            algorithms_found: 0,
        };
        let api = &self.api;
        // SAFETY: out-pointers are valid; attribute buffers match the documented types
        // (int32 for TRANSA/TRANSB, uint64 for the workspace size); every descriptor is
        // destroyed in Plan's Drop, also when a later step fails.
        unsafe {
            self.check((api.desc_create)(&mut plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "MatmulDescCreate")?;
            let (trans_a, trans_b) = (CUBLAS_OP_T, CUBLAS_OP_N);
            self.check(
                (api.desc_set)(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, (&trans_a as *const i32).cast(), 4),
                "TRANSA",
            )?;
            self.check(
                (api.desc_set)(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, (&trans_b as *const i32).cast(), 4),
                "TRANSB",
            )?;
            self.check((api.layout_create)(&mut plan.weight_layout, CUDA_R_16F, k, n, k as i64), "layout of B")?;
            self.check((api.layout_create)(&mut plan.input_layout, CUDA_R_16F, k, m, k as i64), "layout of A")?;
            self.check((api.layout_create)(&mut plan.output_layout, CUDA_R_16F, n, m, n as i64), "layout of C")?;
            let mut preference = std::ptr::null_mut();
            self.check((api.pref_create)(&mut preference), "MatmulPreferenceCreate")?;
            let workspace = WORKSPACE_BYTES as u64;
            let set = (api.pref_set)(
                preference,
                CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&workspace as *const u64).cast(),
                8,
            );
            let mut found = 0;
            let heuristic = (api.heuristic)(
                self.handle,
                plan.desc,
                plan.weight_layout,
                plan.input_layout,
                plan.output_layout,
                plan.output_layout,
                preference,
                1,
                &mut plan.result,
                &mut found,
            );
            (api.pref_destroy)(preference);
            self.check(set, "MAX_WORKSPACE_BYTES")?;
            self.check(heuristic, "cublasLtMatmulAlgoGetHeuristic")?;
            if found < 1 {
                return Err(format!("cuBLASLt found no algorithm for {m}x{n}x{k}"));
            }
            plan.algorithms_found = found;
        }
        Ok(plan)
    }
}

impl Plan<'_> {
    /// Enqueues C = A B^T on the CUDA stream.
    pub fn run(&self, a: CuDevicePtr, b: CuDevicePtr, c: CuDevicePtr) -> Result<(), String> {
        let lt = self.lt;
        let (alpha, beta) = (1.0f32, 0.0f32);
        // SAFETY: the pointers address live device buffers of the planned sizes (the
        // caller's contract); the descriptors and workspace live as long as `self`.
        let status = unsafe {
            (lt.api.matmul)(
                lt.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                b as *const c_void,
                self.weight_layout,
                a as *const c_void,
                self.input_layout,
                (&beta as *const f32).cast(),
                c as *const c_void,
                self.output_layout,
                c as *mut c_void,
                self.output_layout,
                &self.result.algo,
                lt.workspace.ptr as *mut c_void,
                lt.workspace.size,
                lt.cuda.stream,
            )
        };
        lt.check(status, "cublasLtMatmul")
    }

    pub fn workspace_needed(&self) -> usize {
        self.result.workspace_size
    }
}

impl Drop for Plan<'_> {
    fn drop(&mut self) {
        let api = &self.lt.api;
        // SAFETY: each descriptor is null or was created by this plan; no enqueued product
        // reads descriptors after cublasLtMatmul returns.
        unsafe {
            for layout in [self.weight_layout, self.input_layout, self.output_layout] {
                if !layout.is_null() {
                    (api.layout_destroy)(layout);
                }
            }
            if !self.desc.is_null() {
                (api.desc_destroy)(self.desc);
            }
        }
    }
}

impl Drop for Lt<'_> {
    fn drop(&mut self) {
        // SAFETY: every plan borrows `self` and is gone; the stream is synchronised so the
        // workspace is idle when it is freed right after.
        unsafe {
            let _ = self.cuda.synchronize();
            (self.api.destroy)(self.handle);
        }
    }
}
