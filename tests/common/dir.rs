//! A scratch directory of files for the command-line tests, removed when dropped.

use std::path::PathBuf;

/// A directory under the system's temporary directory holding the given files (names may
/// contain `/`), unique to the test process and `tag`.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(tag: &str, files: &[(&str, &str)]) -> Dir {
        let p = std::env::temp_dir().join(format!("fn-hcl-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("mkdir");
        for (name, data) in files {
            let f = p.join(name);
            std::fs::create_dir_all(f.parent().expect("has a parent")).expect("mkdir");
            std::fs::write(f, data).expect("write");
        }
        Dir(p)
    }

    /// The path of `name` in it, as a command-line argument.
    pub fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).expect("read")
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
