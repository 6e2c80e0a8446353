//! Reading the kernel's small text files under `/proc`, for every layer.

use std::io::Read;

/// The whole of a small file such as `/proc/self/status` (about 1.5 KB) or a
/// task's `children`, read into a 4 KiB buffer (grown if it fills): two
/// `read` calls where `std::fs::read_to_string` makes a size query and a
/// read per doubling from 32 bytes, nine calls for `/proc/self/status`.
/// Bytes that are not UTF-8 are replaced (these files are ASCII). Opened
/// with `openat(2)`, one call ([`crate::sys::fd::open_read`]).
///
/// # Errors
/// Opening or reading the file failed.
pub fn read(path: impl AsRef<std::path::Path>) -> std::io::Result<String> {
    let mut file = crate::sys::fd::open_read(path.as_ref())?;
    let mut buf = vec![0u8; 4096];
    let mut len = 0;
    loop {
        if len == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The parent pid in the text of a `/proc/PID/stat`; `None` when the text
/// is cut short (the process went away during the read) or malformed. The
/// process name may hold spaces and parentheses, so the fields are counted
/// from the last `)` (proc(5)).
pub fn ppid_in_stat(stat: &str) -> Option<u32> {
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    rest.split_ascii_whitespace().nth(1)?.parse().ok()
}

/// The parent pid of `pid`, from `/proc/PID/stat`; `None` when it is gone.
pub fn ppid(pid: u32) -> Option<u32> {
    ppid_in_stat(&read(format!("/proc/{pid}/stat")).ok()?)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_parent_pid_is_read_after_the_last_parenthesis_and_a_short_read_gives_none() {
        assert_eq!(super::ppid_in_stat("42 (a) b) c) S 7 42 42 0"), Some(7));
        assert_eq!(super::ppid_in_stat("42 (name) S 1 42"), Some(1));
        for cut in ["42 (name)", "42 (name) ", "42 (name) S", "42 (name) S x", "42 (name", ""] {
            assert_eq!(super::ppid_in_stat(cut), None, "{cut:?}");
        }
        assert_eq!(super::ppid(std::process::id()), Some(std::os::unix::process::parent_id()));
    }

    #[test]
    fn reads_a_proc_file_whole_and_a_file_larger_than_the_first_buffer() {
        let status = super::read("/proc/self/status").unwrap();
        assert!(status.starts_with("Name:") && status.contains("\nSigIgn:"), "{status}");
        let dir = tempfile::tempdir().unwrap();
        let big: String = (0..3000).map(|i| format!("{i}\n")).collect();
        std::fs::write(dir.path().join("big"), &big).unwrap();
        assert_eq!(super::read(dir.path().join("big")).unwrap(), big);
        assert!(super::read(dir.path().join("missing")).is_err());
    }
}
