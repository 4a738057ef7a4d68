//! `.npy` files for `pld run`: reading `--input` tensors and writing outputs.
//!
//! Tensors are written in their own dtype (`<f4` for FP32, `<f2` for FP16, `<i4` for INT32,
//! …). NumPy has no bfloat16, so BF16 tensors are written as `<u2` holding the raw bits
//! (D-cli-1 in docs/decisions/cli.md). Reading checks the file's dtype against the parameter's.

use pld_ir::DataType;
use pld_sim::lazy::LazyInput;
use pld_sim::HostTensor;
use std::path::Path;

/// The NumPy type string of `dtype`, if it has one (BF16: its raw bits, `<u2`).
pub fn type_str(dtype: DataType) -> Option<&'static str> {
    dtype.numpy_descr()
}

/// The `.npy` header of a `dtype` tensor of `shape` (npyz writes it for [`type_str`]'s dtype).
fn header(dtype: DataType, shape: &[usize], extra: usize) -> Result<Vec<u8>, String> {
    use npyz::WriterBuilder;
    let ts = type_str(dtype).ok_or_else(|| format!("dtype {dtype} has no .npy form"))?;
    let descr = npyz::DType::Plain(ts.parse().map_err(|e| format!("type string {ts}: {e}"))?);
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let mut out = Vec::with_capacity(128 + extra);
    npyz::WriteOptions::new_header_only()
        .dtype(descr)
        .shape(&shape)
        .writer(&mut out)
        .write_header_only()
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// Serialises a tensor as `.npy` bytes: the header, then the tensor's own bytes
/// (little-endian elements, as every type string says), so nothing is converted element by
/// element.
pub fn to_npy(t: &HostTensor) -> Result<Vec<u8>, String> {
    let nbytes = t.numel() * t.dtype.bytes() as usize;
    let data = t
        .data
        .get(..nbytes)
        .ok_or_else(|| format!("tensor of shape {:?} holds {} bytes, not {nbytes}", t.shape, t.data.len()))?;
    let mut out = header(t.dtype, &t.shape, nbytes)?;
    out.extend_from_slice(data);
    Ok(out)
}

/// Writes the tensor `l`'s source gives to `path` as `.npy`, one chunk at a time (never the
/// whole tensor in memory).
pub fn write_lazy(path: &Path, l: &LazyInput) -> Result<(), String> {
    use std::io::Write;
    let nbytes = l.shape.iter().product::<usize>() * l.dtype.bytes() as usize;
    let head = header(l.dtype, &l.shape, 0)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(cannot)?);
    f.write_all(&head).map_err(cannot)?;
    let mut chunk = vec![0u8; pld_sim::lazy::CHUNK];
    for lo in (0..nbytes).step_by(pld_sim::lazy::CHUNK) {
        let part = &mut chunk[..(nbytes - lo).min(pld_sim::lazy::CHUNK)];
        l.source.fill(lo, part);
        f.write_all(part).map_err(cannot)?;
    }
    f.flush().map_err(cannot)
}

/// Writes `t` to `path` as `.npy`.
pub fn write(path: &Path, t: &HostTensor) -> Result<(), String> {
    let bytes = to_npy(t)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Reads a `.npy` file as a tensor of `dtype` (the file's dtype must match).
pub fn read(path: &Path, dtype: DataType) -> Result<HostTensor, String> {
    use std::io::Read;
    let (mut file, shape, nbytes) = open(path, dtype)?;
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    // Only the data bytes the header promised (the file's length was checked).
    let mut data = Vec::new();
    data.try_reserve_exact(nbytes as usize)
        .map_err(|e| format!("{}: {nbytes} data bytes: {e}", path.display()))?;
    (&mut file).take(nbytes).read_to_end(&mut data).map_err(cannot)?;
    if data.len() as u64 != nbytes {
        return Err(format!(
            "{}: the file ended after {} of {nbytes} data bytes",
            path.display(),
            data.len()
        ));
    }
    Ok(HostTensor { dtype, shape, data })
}

/// A `.npy` file as a source a process reads only where it touches the tensor: its header
/// is checked now as [`read`] checks it.
pub fn open_lazy(path: &Path, dtype: DataType) -> Result<LazyInput, String> {
    use std::io::Seek;
    let (mut file, shape, _) = open(path, dtype)?;
    let offset = file.stream_position().map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let source = std::sync::Arc::new(FileSource { file, offset, path: path.to_path_buf() });
    Ok(LazyInput { dtype, shape, source })
}

/// The data of a checked `.npy` file, read where a process touches it.
#[derive(Debug)]
struct FileSource {
    file: std::fs::File,
    offset: u64,
    path: std::path::PathBuf,
}

impl pld_sim::lazy::HostSource for FileSource {
    fn fill(&self, at: usize, out: &mut [u8]) {
        use std::os::unix::fs::FileExt;
        if let Err(e) = self.file.read_exact_at(out, self.offset + at as u64) {
            // The file was whole when the run began (its length was checked): it changed
            // under the run. The process stops rather than simulate on bytes it never read.
            eprintln!("error: --input {} changed while the run read it: {e}", self.path.display());
            std::process::exit(2);
        }
    }
}

/// Opens a `.npy` file whose dtype must be `dtype` and whose length must be what its header
/// promises: the file positioned at its data, the shape, and the data's length.
fn open(path: &Path, dtype: DataType) -> Result<(std::fs::File, Vec<usize>, u64), String> {
    use std::io::{Read, Seek};
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let file_len = file.metadata().map_err(cannot)?.len();
    // The header first (its length is in the first 12 bytes): the data's size is checked
    // against the header and the file's length before a byte of data is read.
    let mut bytes = Vec::new();
    (&mut file).take(12).read_to_end(&mut bytes).map_err(cannot)?;
    let header_end = data_offset_unchecked(&bytes).unwrap_or(bytes.len()).min(MAX_HEADER);
    if header_end > bytes.len() {
        (&mut file).take((header_end - bytes.len()) as u64).read_to_end(&mut bytes).map_err(cannot)?;
    }
    if let Some(shape) =
        header_shape(&bytes).filter(|s| s.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).is_none())
    {
        // npyz multiplies the dims unchecked (a panic in debug builds, a wrapped count in release).
        return Err(format!(
            "{}: the header's shape {shape:?} has more elements than fit in 64 bits",
            path.display()
        ));
    }
    let npy =
        npyz::NpyFile::new(&bytes[..]).map_err(|e| format!("{}: not a .npy file: {e}", path.display()))?;
    let want = type_str(dtype).ok_or_else(|| format!("parameter dtype {dtype} cannot be read from .npy"))?;
    let got = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.to_string(),
        other => return Err(format!("{}: unsupported structured dtype {other:?}", path.display())),
    };
    if normalise(&got) != normalise(want) {
        return Err(format!(
            "{}: dtype {got} does not match the parameter's {dtype} ({want})",
            path.display()
        ));
    }
    if npy.header().order() == npyz::Order::Fortran {
        return Err(format!("{}: Fortran-ordered arrays are not supported", path.display()));
    }
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let dims: Vec<i64> = npy.shape().iter().map(|&d| i64::try_from(d).unwrap_or(-1)).collect();
    let nbytes = pld_sim::limits::byte_size(dtype, &dims).map_err(|e| format!("{}: {e}", path.display()))?;
    let offset = data_offset(&bytes).ok_or_else(|| format!("{}: malformed .npy header", path.display()))?;
    let actual = file_len.saturating_sub(offset as u64);
    if actual != nbytes {
        return Err(format!(
            "{}: the header's shape {shape:?} of {dtype} needs {nbytes} data bytes, but the file holds {actual}",
            path.display()
        ));
    }
    file.seek(std::io::SeekFrom::Start(offset as u64)).map_err(cannot)?;
    Ok((file, shape, nbytes))
}

/// The longest `.npy` header read (numpy writes at most a few KiB; version 2 allows 4 GiB).
const MAX_HEADER: usize = 1 << 20;

/// Where the data starts by the header-length field alone (the header need not be read yet).
fn data_offset_unchecked(bytes: &[u8]) -> Option<usize> {
    let le = |r: std::ops::Range<usize>| -> Option<usize> {
        Some(bytes.get(r)?.iter().rev().fold(0usize, |n, &b| (n << 8) | usize::from(b)))
    };
    match bytes.get(6)? {
        1 => Some(10 + le(8..10)?),
        _ => Some(12 + le(8..12)?),
    }
}

/// Where the data of a `.npy` file starts: after the magic, the version, the header length
/// (two bytes in version 1, four in 2 and 3) and the header.
fn data_offset(bytes: &[u8]) -> Option<usize> {
    let le = |r: std::ops::Range<usize>| -> Option<usize> {
        Some(bytes.get(r)?.iter().rev().fold(0usize, |n, &b| (n << 8) | usize::from(b)))
    };
    let offset = match bytes.get(6)? {
        1 => 10 + le(8..10)?,
        _ => 12 + le(8..12)?,
    };
    (offset <= bytes.len()).then_some(offset)
}

/// The dims of the `'shape': (...)` entry of a `.npy` header, when they all read as integers.
fn header_shape(bytes: &[u8]) -> Option<Vec<u64>> {
    let start = if *bytes.get(6)? == 1 { 10 } else { 12 };
    let header = std::str::from_utf8(bytes.get(start..data_offset(bytes)?)?).ok()?;
    let after = &header[header.find("'shape'")? + "'shape'".len()..];
    let inner = &after[after.find('(')? + 1..];
    let inner = &inner[..inner.find(')')?];
    inner.split(',').map(str::trim).filter(|d| !d.is_empty()).map(|d| d.parse().ok()).collect()
}

fn normalise(ts: &str) -> String {
    // `|u1` and `<u1` mean the same for one-byte types.
    ts.replace(['|', '='], "<")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_shape_whose_element_count_overflows_is_an_error() {
        // Regression: npyz multiplied the header's dims unchecked and panicked (debug builds).
        let dir = std::env::temp_dir().join(format!("pld-npy-overflow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.npy");
        let mut header =
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4, 2), }".to_string();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bad = b"\x93NUMPY\x01\x00".to_vec();
        bad.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
        bad.extend_from_slice(header.as_bytes());
        bad.extend_from_slice(&[0; 32]);
        std::fs::write(&p, &bad).unwrap();
        let e = read(&p, DataType::FP32).unwrap_err();
        assert!(e.contains("[4611686018427387904, 4, 2] has more elements than fit in 64 bits"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_size_that_disagrees_with_the_header_is_an_error() {
        // Regression: extra bytes after the data were accepted and the elements read from the
        // END of the file (every element shifted); a short file is an error too.
        let dir = std::env::temp_dir().join(format!("pld-npy-size-{}", std::process::id()));
        let t = HostTensor::from_f64(DataType::FP32, vec![2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let p = dir.join("t.npy");
        write(&p, &t).unwrap();
        let good = std::fs::read(&p).unwrap();
        let mut long = good.clone();
        long.extend_from_slice(&[0, 0, 0x80, 0x3f]);
        std::fs::write(&p, &long).unwrap();
        let e = read(&p, DataType::FP32).unwrap_err();
        assert!(e.contains("needs 16 data bytes, but the file holds 20"), "{e}");
        std::fs::write(&p, &good[..good.len() - 4]).unwrap();
        let e = read(&p, DataType::FP32).unwrap_err();
        assert!(e.contains("needs 16 data bytes, but the file holds 12"), "{e}");
        std::fs::write(&p, &good).unwrap();
        assert_eq!(read(&p, DataType::FP32).unwrap(), t);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn round_trips_fp32_and_fp16() {
        let dir = std::env::temp_dir().join(format!("pld-npy-{}", std::process::id()));
        for (dtype, vals) in [(DataType::FP32, vec![1.5, -2.0, 3.25]), (DataType::FP16, vec![0.5, 1.0, -4.0])]
        {
            let t = HostTensor::from_f64(dtype, vec![3, 1], &vals);
            let p = dir.join(format!("{}.npy", dtype.display_name()));
            write(&p, &t).unwrap();
            let back = read(&p, dtype).unwrap();
            assert_eq!(back, t);
            assert!(read(&p, DataType::INT32).unwrap_err().contains("does not match"));
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn every_dtype_is_written_as_its_type_string_and_reads_back() {
        // What `to_npy` writes is what `read` accepts (BOOL as `|b1`, BF16 as `<u2` bits), and
        // npyz's own typed reader sees the same values.
        let dir = std::env::temp_dir().join(format!("pld-npy-all-{}", std::process::id()));
        let vals = [0.0, 1.0, -2.0, 3.5, 100.0, -7.25];
        for dtype in pld_sim::elem::SUPPORTED {
            let t = HostTensor::from_f64(dtype, vec![2, 3], &vals);
            let p = dir.join(format!("{}.npy", dtype.display_name()));
            write(&p, &t).unwrap();
            assert_eq!(read(&p, dtype).unwrap(), t, "{dtype}");
            let bytes = std::fs::read(&p).unwrap();
            let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
            assert_eq!(npy.shape(), &[2, 3], "{dtype}");
            let npyz::DType::Plain(ts) = npy.dtype() else { panic!("{dtype}: not a plain dtype") };
            assert_eq!(normalise(&ts.to_string()), normalise(type_str(dtype).unwrap()), "{dtype}");
        }
        let f32s: Vec<f32> = {
            let t = HostTensor::from_f64(DataType::FP32, vec![6], &vals);
            let p = dir.join("typed.npy");
            write(&p, &t).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            npyz::NpyFile::new(&bytes[..]).unwrap().into_vec().unwrap()
        };
        assert_eq!(f32s, vals.iter().map(|&v| v as f32).collect::<Vec<_>>());
        let _ = std::fs::remove_dir_all(dir);
    }
}
