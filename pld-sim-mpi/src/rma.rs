//! MPI-3 one-sided communication (RMA) behind a safe interface: the only `unsafe` of the
//! MPI engine.
//!
//! Guarantees:
//! - A [`Window`] is allocated collectively (`MPI_Win_allocate`, displacement unit 1) over
//!   `MPI_COMM_WORLD` and opened at once in one passive-target epoch to every process
//!   (`MPI_Win_lock_all`), which lasts until the window is dropped (`MPI_Win_unlock_all`,
//!   `MPI_Win_free`, collective: every process drops its windows at the same point).
//! - Every operation is checked against the target's window size (every member's window of
//!   one domain has the same size) before MPI sees it, so no call can touch memory outside a
//!   window; a violation is an engine bug and aborts the job with a message, never memory
//!   corruption.
//! - Every operation is complete at its target when it returns (`MPI_Win_flush` after it): a
//!   rank's window operations take effect in its program order.
//! - Atomic operations: `MPI_Accumulate`/`MPI_Fetch_and_op` with `MPI_SUM`; an atomic read
//!   is `MPI_Fetch_and_op` adding 0 (the bindings lack `MPI_NO_OP`), an atomic store is a
//!   `MPI_Compare_and_swap` loop (they lack `MPI_REPLACE`). Signal cells and the watchdog's
//!   cells are only ever accessed through these, never by `MPI_Put`/`MPI_Get`, so every
//!   concurrent access to one of them is atomic (accumulate operations of one predefined
//!   datatype on one location are atomic with respect to each other).
//! - Only the thread that created a window calls MPI on it (MPI is initialised with
//!   `MPI_THREAD_SINGLE`); each call checks this, so the `Send`/`Sync` below cannot be used to
//!   call MPI from another thread.
#![allow(unsafe_code)]

use mpi::ffi;
use std::os::raw::{c_int, c_void};

/// Integers [`Window`]'s fetch-and-add works on, as the [`Elem`] that names their MPI type.
trait AtomicInt: Copy + Default {
    const ELEM: Elem;
}

impl AtomicInt for i32 {
    const ELEM: Elem = Elem::I32;
}

impl AtomicInt for i64 {
    const ELEM: Elem = Elem::I64;
}

/// The MPI datatype of raw bytes.
fn byte_datatype() -> ffi::MPI_Datatype {
    // SAFETY: reading a handle rsmpi's C shim initialises before `main` runs MPI code.
    unsafe { ffi::RSMPI_UINT8_T }
}

/// Element types [`Window::accumulate`] can add.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// `int8_t`.
    I8,
    /// `int16_t`.
    I16,
    /// `int32_t`.
    I32,
    /// `int64_t`.
    I64,
}

impl Elem {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Elem::I8 => 1,
            Elem::I16 => 2,
            Elem::F32 | Elem::I32 => 4,
            Elem::F64 | Elem::I64 => 8,
        }
    }

    fn datatype(self) -> ffi::MPI_Datatype {
        // SAFETY: reading the handles rsmpi's C shim initialises before `main` runs MPI code.
        unsafe {
            match self {
                Elem::F32 => ffi::RSMPI_FLOAT,
                Elem::F64 => ffi::RSMPI_DOUBLE,
                Elem::I8 => ffi::RSMPI_INT8_T,
                Elem::I16 => ffi::RSMPI_INT16_T,
                Elem::I32 => ffi::RSMPI_INT32_T,
                Elem::I64 => ffi::RSMPI_INT64_T,
            }
        }
    }
}

/// One RMA window: this process's part of it and its handle.
pub struct Window {
    win: ffi::MPI_Win,
    size: usize,
    thread: std::thread::ThreadId,
}

// SAFETY: the handle is only used by the creating thread (checked by `Window::own`), so moving
// or sharing the value between threads cannot make two threads call MPI on it.
unsafe impl Send for Window {}
// SAFETY: as above.
unsafe impl Sync for Window {}

/// Aborts the whole MPI job (every process) with `code`, after printing `msg`.
pub fn abort(code: i32, msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("{msg}");
    }
    use std::io::Write;
    let _ = std::io::stderr().flush();
    let _ = std::io::stdout().flush();
    // SAFETY: `MPI_Abort` on the world communicator takes no pointers.
    unsafe {
        ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, code as c_int);
    }
    std::process::exit(code)
}

impl Window {
    /// Collectively allocates a window of `size` bytes per process (`fill` writes them before
    /// any other process can reach them), and opens the passive-target epoch. Every process
    /// calls this in the same order with the same `size` (or 0 for a process that holds no
    /// part).
    pub fn allocate(size: usize, fill: &dyn Fn(&mut [u8])) -> Window {
        let mut base: *mut u8 = std::ptr::null_mut();
        let mut win = std::mem::MaybeUninit::<ffi::MPI_Win>::uninit();
        // SAFETY: `base` and `win` are valid out-pointers; MPI writes a pointer to `size`
        // bytes into `base` and the handle into `win`.
        let rc = unsafe {
            ffi::MPI_Win_allocate(
                size as ffi::MPI_Aint,
                1,
                ffi::RSMPI_INFO_NULL,
                ffi::RSMPI_COMM_WORLD,
                (&mut base as *mut *mut u8).cast::<c_void>(),
                win.as_mut_ptr(),
            )
        };
        if rc != 0 {
            abort(3, &format!("error: MPI_Win_allocate of {size} bytes failed ({rc})"));
        }
        // SAFETY: MPI_Win_allocate succeeded, so it wrote the handle.
        let win = unsafe { win.assume_init() };
        if size > 0 && !base.is_null() {
            // SAFETY: `base` points at `size` bytes of this process's window that nothing else
            // references, and no other process can access them before the barrier below; the
            // slice does not outlive this block.
            let bytes = unsafe { std::slice::from_raw_parts_mut(base, size) };
            fill(bytes);
        }
        // SAFETY: `win` is a valid window handle.
        unsafe {
            ffi::MPI_Win_lock_all(0, win);
            ffi::MPI_Win_sync(win);
            ffi::MPI_Barrier(ffi::RSMPI_COMM_WORLD);
        }
        Window { win, size, thread: std::thread::current().id() }
    }

    /// The window's handle, after checking the calling thread and `[disp, disp + len)`.
    fn own(&self, disp: usize, len: usize, what: &str) -> ffi::MPI_Win {
        if std::thread::current().id() != self.thread {
            abort(3, &format!("error: internal: MPI {what} from another thread"));
        }
        if disp.checked_add(len).is_none_or(|end| end > self.size) {
            abort(
                3,
                &format!(
                    "error: internal: MPI {what} of bytes [{disp}, +{len}) outside a window of {} bytes",
                    self.size
                ),
            );
        }
        self.win
    }

    fn flush(&self, target: usize) {
        // SAFETY: a valid handle inside its epoch.
        unsafe {
            ffi::MPI_Win_flush(target as c_int, self.win);
        }
    }

    /// Runs `op` over `[disp, disp + len)` of process `target`'s part in chunks whose element
    /// counts fit MPI's `int` (whole `unit`-byte elements each), then flushes: `op` gets the
    /// chunk's byte range relative to `disp`, its displacement in the window and the handle.
    fn chunked(
        &self,
        what: &str,
        target: usize,
        disp: usize,
        len: usize,
        unit: usize,
        mut op: impl FnMut(std::ops::Range<usize>, ffi::MPI_Aint, ffi::MPI_Win),
    ) {
        let win = self.own(disp, len, what);
        let per = (1usize << 30) / unit * unit;
        for lo in (0..len).step_by(per) {
            let hi = (lo + per).min(len);
            op(lo..hi, (disp + lo) as ffi::MPI_Aint, win);
        }
        // Results and origin buffers are complete (and reusable) only after the flush.
        self.flush(target);
    }

    /// Reads `out.len()` bytes at byte `disp` of process `target`'s part.
    pub fn get(&self, target: usize, disp: usize, out: &mut [u8]) {
        let (t, u8t) = (target as c_int, byte_datatype());
        self.chunked("get", target, disp, out.len(), 1, |r, at, win| {
            let (n, chunk) = (r.len() as c_int, out[r].as_mut_ptr().cast::<c_void>());
            // SAFETY: `chunk` is valid for writes of `n` bytes; the target range was checked.
            unsafe { ffi::MPI_Get(chunk, n, u8t, t, at, n, u8t, win) };
        });
    }

    /// Writes `src` at byte `disp` of process `target`'s part.
    pub fn put(&self, target: usize, disp: usize, src: &[u8]) {
        let (t, u8t) = (target as c_int, byte_datatype());
        self.chunked("put", target, disp, src.len(), 1, |r, at, win| {
            let (n, chunk) = (r.len() as c_int, src[r].as_ptr().cast::<c_void>());
            // SAFETY: `chunk` is valid for reads of `n` bytes and is not changed before the
            // flush; the target range was checked.
            unsafe { ffi::MPI_Put(chunk, n, u8t, t, at, n, u8t, win) };
        });
    }

    /// Adds the `elem` elements of `src` element-wise and atomically into process `target`'s
    /// part at byte `disp` (`MPI_Accumulate`, `MPI_SUM`).
    pub fn accumulate(&self, target: usize, disp: usize, src: &[u8], elem: Elem) {
        let (t, dt, eb) = (target as c_int, elem.datatype(), elem.bytes());
        self.chunked("accumulate", target, disp, src.len(), eb, |r, at, win| {
            let (n, chunk) = ((r.len() / eb) as c_int, src[r].as_ptr().cast::<c_void>());
            // SAFETY: `chunk` holds `n` whole elements and is not changed before the flush.
            unsafe { ffi::MPI_Accumulate(chunk, n, dt, t, at, n, dt, ffi::RSMPI_SUM, win) };
        });
    }

    /// Atomically adds `v` to the integer at byte `disp` of `target`'s part; the value before
    /// (`MPI_Fetch_and_op`, `MPI_SUM`).
    fn fetch_add<T: AtomicInt>(&self, target: usize, disp: usize, v: T) -> T {
        let win = self.own(disp, std::mem::size_of::<T>(), "fetch-and-op");
        let mut old = T::default();
        // SAFETY: both pointers are to live `T`s; `old` is read only after the flush.
        unsafe {
            ffi::MPI_Fetch_and_op(
                (&v as *const T).cast::<c_void>(),
                (&mut old as *mut T).cast::<c_void>(),
                T::ELEM.datatype(),
                target as c_int,
                disp as ffi::MPI_Aint,
                ffi::RSMPI_SUM,
                win,
            );
        }
        self.flush(target);
        old
    }

    /// Atomically adds `v` to the `i32` at byte `disp` of `target`'s part; the value before.
    pub fn fetch_add_i32(&self, target: usize, disp: usize, v: i32) -> i32 {
        self.fetch_add(target, disp, v)
    }

    /// Atomically adds `v` to the `i64` at byte `disp` of `target`'s part; the value before.
    pub fn fetch_add_i64(&self, target: usize, disp: usize, v: i64) -> i64 {
        self.fetch_add(target, disp, v)
    }

    /// Atomically replaces the `i32` at byte `disp` of `target`'s part by `new` if it equals
    /// `compare`; the value before (`MPI_Compare_and_swap`).
    pub fn compare_swap_i32(&self, target: usize, disp: usize, compare: i32, new: i32) -> i32 {
        let win = self.own(disp, 4, "compare-and-swap");
        let mut old = 0i32;
        // SAFETY: all three pointers are to live `i32`s; `old` is read only after the flush.
        unsafe {
            ffi::MPI_Compare_and_swap(
                (&new as *const i32).cast::<c_void>(),
                (&compare as *const i32).cast::<c_void>(),
                (&mut old as *mut i32).cast::<c_void>(),
                ffi::RSMPI_INT32_T,
                target as c_int,
                disp as ffi::MPI_Aint,
                win,
            );
        }
        self.flush(target);
        old
    }

    /// Atomically stores `v` into the `i32` at byte `disp` of `target`'s part; the value
    /// before (a compare-and-swap loop from an atomic read).
    pub fn swap_i32(&self, target: usize, disp: usize, v: i32) -> i32 {
        let mut seen = self.fetch_add_i32(target, disp, 0);
        loop {
            let was = self.compare_swap_i32(target, disp, seen, v);
            if was == seen {
                return was;
            }
            seen = was;
        }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: a valid handle inside its epoch; every process drops its windows at the
        // same point of the run (collective free).
        unsafe {
            ffi::MPI_Win_unlock_all(self.win);
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}
