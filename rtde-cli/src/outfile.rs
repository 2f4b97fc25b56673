//! Output files that never look complete before they are.
//!
//! A [`PendingFile`] is written under the final name plus `.partial`, next to it (so the
//! rename stays on one file system), and renamed to the final name only by
//! [`PendingFile::commit`]. A run that fails part-way keeps what it wrote under the
//! `.partial` name, and one that fails before writing anything leaves nothing.

use crate::said;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A file being written under a temporary name.
#[derive(Debug)]
pub(crate) struct PendingFile {
    path: PathBuf,
    temp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl PendingFile {
    /// Creates `path.partial`; refuses to overwrite one (it may hold an earlier run's data).
    pub(crate) fn create(path: &Path) -> Result<Self, String> {
        // The rename at the end would fail, after all the work: say so now.
        if path.is_dir() {
            return Err(format!(
                "cannot write `{}`: it is a directory",
                path.display()
            ));
        }
        let temp = partial_path(path);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| match e.kind() {
                io::ErrorKind::AlreadyExists => format!(
                    "`{}` exists, left by an interrupted recording; move or delete it first",
                    temp.display()
                ),
                _ => format!("cannot create `{}`: {e}", temp.display()),
            })?;
        Ok(PendingFile {
            path: path.to_owned(),
            temp,
            out: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// The final name.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary name.
    pub(crate) fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The writer.
    pub(crate) fn writer(&mut self) -> &mut BufWriter<File> {
        self.out
            .as_mut()
            .expect("written only before commit or keep")
    }

    /// Flushes, syncs and renames the file to its final name, replacing any file there.
    pub(crate) fn commit(mut self) -> Result<(), String> {
        let out = self.out.take().expect("committed once");
        let fail =
            |e: io::Error| format!("cannot write `{}`: {e}", self.temp.display(), e = said(e));
        let file = out.into_inner().map_err(|e| fail(e.into_error()))?;
        file.sync_all().map_err(fail)?;
        drop(file);
        std::fs::rename(&self.temp, &self.path).map_err(|e| {
            format!(
                "cannot rename `{}` to `{}`: {e}; what was written is in `{0}`",
                self.temp.display(),
                self.path.display()
            )
        })
    }

    /// Flushes what was written and leaves it under the `.partial` name; returns that name.
    pub(crate) fn keep_partial(mut self) -> PathBuf {
        if let Some(mut out) = self.out.take() {
            let _ = out.flush();
        }
        std::mem::take(&mut self.temp)
    }
}

impl Drop for PendingFile {
    /// Neither committed nor kept: the run failed before writing anything worth keeping.
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

impl Seek for PendingFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer().seek(pos)
    }
}

impl Write for PendingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer().flush()
    }
}

/// `out.csv` → `out.csv.partial`.
pub(crate) fn partial_path(path: &Path) -> PathBuf {
    let mut name: OsString = path.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rtde-outfile-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn appears_under_its_name_only_when_committed() {
        let dir = scratch("commit");
        let path = dir.join("out.csv");
        let mut f = PendingFile::create(&path).unwrap();
        f.write_all(b"a,b\n").unwrap();
        assert!(!path.exists());
        assert!(dir.join("out.csv.partial").exists());
        f.commit().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"a,b\n");
        assert!(!dir.join("out.csv.partial").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_failed_run_leaves_nothing_or_a_marked_partial() {
        let dir = scratch("fail");
        let path = dir.join("out.csv");
        drop(PendingFile::create(&path).unwrap());
        assert!(std::fs::read_dir(&dir).unwrap().next().is_none());

        let mut f = PendingFile::create(&path).unwrap();
        f.write_all(b"a\n1\n").unwrap();
        let kept = f.keep_partial();
        assert_eq!(kept, dir.join("out.csv.partial"));
        assert_eq!(std::fs::read(&kept).unwrap(), b"a\n1\n");
        assert!(!path.exists());
        // It is not overwritten by the next run.
        let err = PendingFile::create(&path).unwrap_err();
        assert!(err.contains("left by an interrupted recording"), "{err}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
