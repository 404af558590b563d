//! Folders only their owner may enter (0700): a mirror holds another
//! machine's conversations.

use std::path::Path;

use crate::RemoteError;

/// Creates `dir` and its missing parents; `dir` itself is made 0700 (the
/// parents, arbor's cache, are left as they are).
pub fn create(dir: &Path) -> Result<(), RemoteError> {
    std::fs::create_dir_all(dir).map_err(|e| RemoteError::io(dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| RemoteError::io(dir, e))?;
    }
    Ok(())
}
