//! Untrusted input: what a user hands mmqgen (files, names, numbers), read and shown back safely.
//!
//! Two rules every command follows, each with one helper here so that they are kept in one place:
//! - a file input is read only when it is a regular file no larger than a cap chosen for its kind ([`read_capped`],
//!   [`open_capped`]): fifos, devices (`/dev/zero`) and folders are refused before they are opened (opening a fifo
//!   blocks), the length is checked before anything is read, and the read itself stops at the cap plus one byte in
//!   case the file grows meanwhile;
//! - user text echoed in a sentence goes through [`shown`]: control characters (newlines, escape codes) are
//!   escaped so they cannot forge output lines or drive the terminal, and anything over [`SHOWN_CHARS`]
//!   characters is cut with an ellipsis, so a 50 MB name gives a one-line message.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// The most characters of user text an error message shows.
pub const SHOWN_CHARS: usize = 64;

/// `text` as a sentence may show it: at most [`SHOWN_CHARS`] characters (then `...`), control characters and
/// other non-printing characters escaped the way Rust escapes them (`\n`, `\u{1b}`).
pub fn shown(text: &str) -> String {
    shown_at(text, SHOWN_CHARS)
}

/// [`shown`] with another length: for messages of other parsers that may quote the input (TOML, arguments).
pub fn shown_at(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max_chars {
            out.push_str("...");
            break;
        }
        if hidden(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Characters that must not reach a terminal as they are: control characters (newlines, escape codes), and the
/// invisible ones that change how a line reads (zero-width characters, the byte-order mark, line and paragraph
/// separators, right-to-left overrides and isolates), which could make a name look like another.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{061c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// [`shown`] for bytes that may not be UTF-8 (invalid sequences become U+FFFD).
pub fn shown_bytes(bytes: &[u8]) -> String {
    // Cut before decoding so that a huge buffer is never decoded whole (4 bytes per character at most).
    let cut = bytes.len().min(4 * (SHOWN_CHARS + 1));
    let text = shown(&String::from_utf8_lossy(&bytes[..cut]));
    if cut < bytes.len() && !text.ends_with("...") {
        text + "..."
    } else {
        text
    }
}

/// A path as a sentence may show it ([`shown`] on its display form).
pub fn shown_path(path: &Path) -> String {
    shown(&path.to_string_lossy())
}

/// `text` with control and invisible characters escaped (as [`shown`] escapes them) but not shortened: for data
/// a command prints as its output (tensor names in `gguf ls`), which must stay on one line, must not drive the
/// terminal and must read as what it is.
pub fn escaped(text: &str) -> String {
    if !text.chars().any(hidden) {
        return text.to_string();
    }
    text.chars()
        .flat_map(|c| {
            let escape = hidden(c);
            let mut plain = Some(c);
            let mut esc = c.escape_default();
            std::iter::from_fn(move || if escape { esc.next() } else { plain.take() })
        })
        .collect()
}

/// What kind of file input is being read; names it in sentences and sets its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputKind {
    /// `the variant file`, `the config`, ...
    pub what: &'static str,
    /// The most bytes read.
    pub cap: u64,
}

/// The variant files of `--variants` (a catalogue of thousands of variants is under 1 MiB).
pub const VARIANT_FILE: InputKind = InputKind {
    what: "the variant file",
    cap: 4 << 20,
};
/// Selection configs (100,000 rules are about 8 MiB).
pub const CONFIG_FILE: InputKind = InputKind {
    what: "the config",
    cap: 32 << 20,
};
/// The header, metadata and tensor table of a GGUF file, which `gguf ls` reads (real models' tokenizers take a
/// few MiB of metadata).
pub const GGUF_HEADER: InputKind = InputKind {
    what: "the GGUF file",
    cap: 256 << 20,
};
/// A whole GGUF file read to take a tensor from it (`parity --gguf`).
pub const GGUF_FILE: InputKind = InputKind {
    what: "the GGUF file",
    cap: 64 << 30,
};
/// f32 weights or q6_K blocks converted by `q6k quantize|dequantize` (read in pieces, never whole).
pub const Q6K_INPUT: InputKind = InputKind {
    what: "the input",
    cap: 16 << 30,
};

/// Why a file input was not read; each displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{what} {path} is {kind}, not a regular file: mmqgen reads {what} only from a regular file"
    )]
    NotRegular {
        what: &'static str,
        path: String,
        kind: &'static str,
    },
    #[error("{what} {path} is {len} bytes, over mmqgen's limit of {cap} bytes for it")]
    TooLarge {
        what: &'static str,
        path: String,
        len: u64,
        cap: u64,
    },
    #[error("{what} {path} changed while it was read ({expected} bytes were expected, {got} were read): read it again")]
    Changed {
        what: &'static str,
        path: String,
        expected: u64,
        got: u64,
    },
    #[error("{what} {path} is not UTF-8 text (its first invalid byte is at offset {offset})")]
    NotUtf8 {
        what: &'static str,
        path: String,
        offset: usize,
    },
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a fifo (named pipe)";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// A regular file opened for reading, its length known and within the cap.
pub struct CappedFile {
    file: std::io::Take<std::fs::File>,
    /// The length the file had when it was opened.
    pub len: u64,
    kind: InputKind,
    path: String,
}

impl fmt::Debug for CappedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CappedFile")
            .field("path", &self.path)
            .field("len", &self.len)
            .finish()
    }
}

impl CappedFile {
    /// Fills `buf` from the file; fewer bytes only at its end.
    pub fn read_chunk(&mut self, buf: &mut [u8]) -> Result<usize, InputError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.file.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(InputError::Io {
                        what: self.kind.what,
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        Ok(filled)
    }

    /// The error for a file whose length is not what its metadata said.
    pub fn changed(&self, got: u64) -> InputError {
        InputError::Changed {
            what: self.kind.what,
            path: self.path.clone(),
            expected: self.len,
            got,
        }
    }
}

/// Opens `path` as `kind`: refused unless it is a regular file of at most `kind.cap` bytes (checked before it
/// is opened, and again on the open file). Reads through the result stop at the cap plus one byte.
pub fn open_capped(path: &Path, kind: InputKind) -> Result<CappedFile, InputError> {
    let shown = shown_path(path);
    let io = |source| InputError::Io {
        what: kind.what,
        path: shown.clone(),
        source,
    };
    let check = |meta: &std::fs::Metadata| {
        if !meta.is_file() {
            return Err(InputError::NotRegular {
                what: kind.what,
                path: shown.clone(),
                kind: kind_of(meta),
            });
        }
        if meta.len() > kind.cap {
            return Err(InputError::TooLarge {
                what: kind.what,
                path: shown.clone(),
                len: meta.len(),
                cap: kind.cap,
            });
        }
        Ok(meta.len())
    };
    // Before opening: opening a fifo for reading blocks until someone writes to it.
    check(&std::fs::metadata(path).map_err(io)?)?;
    let file = std::fs::File::open(path).map_err(io)?;
    let len = check(&file.metadata().map_err(io)?)?;
    Ok(CappedFile {
        file: file.take(kind.cap.saturating_add(1)),
        len,
        kind,
        path: shown,
    })
}

/// The whole of `path`, read as `kind` ([`open_capped`]).
pub fn read_capped(path: &Path, kind: InputKind) -> Result<Vec<u8>, InputError> {
    let mut file = open_capped(path, kind)?;
    let mut bytes = Vec::with_capacity(usize::try_from(file.len).unwrap_or(0));
    file.file
        .read_to_end(&mut bytes)
        .map_err(|source| InputError::Io {
            what: kind.what,
            path: file.path.clone(),
            source,
        })?;
    if bytes.len() as u64 != file.len {
        return Err(file.changed(bytes.len() as u64));
    }
    Ok(bytes)
}

/// At most the first `kind.cap` bytes of the regular file `path` and its whole length: for formats whose
/// header says where the rest lies (GGUF), so that a large file is never read whole.
pub fn read_prefix(path: &Path, kind: InputKind) -> Result<(Vec<u8>, u64), InputError> {
    let shown = shown_path(path);
    let io = |source| InputError::Io {
        what: kind.what,
        path: shown.clone(),
        source,
    };
    let regular = |meta: std::fs::Metadata| {
        if meta.is_file() {
            Ok(meta.len())
        } else {
            Err(InputError::NotRegular {
                what: kind.what,
                path: shown.clone(),
                kind: kind_of(&meta),
            })
        }
    };
    regular(std::fs::metadata(path).map_err(io)?)?;
    let file = std::fs::File::open(path).map_err(io)?;
    let len = regular(file.metadata().map_err(io)?)?;
    let want = len.min(kind.cap);
    let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
    file.take(want).read_to_end(&mut bytes).map_err(io)?;
    if (bytes.len() as u64) < want {
        return Err(InputError::Changed {
            what: kind.what,
            path: shown,
            expected: len,
            got: bytes.len() as u64,
        });
    }
    Ok((bytes, len))
}

/// [`read_capped`] for a text file: its bytes must be UTF-8.
pub fn read_text_capped(path: &Path, kind: InputKind) -> Result<String, InputError> {
    let bytes = read_capped(path, kind)?;
    String::from_utf8(bytes).map_err(|e| InputError::NotUtf8 {
        what: kind.what,
        path: shown_path(path),
        offset: e.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_cuts_and_escapes() {
        assert_eq!(shown("r56"), "r56");
        assert_eq!(shown("a\nb\u{1b}[31m"), "a\\nb\\u{1b}[31m");
        let long = "x".repeat(1000);
        assert_eq!(shown(&long), format!("{}...", "x".repeat(SHOWN_CHARS)));
        assert_eq!(shown(&"x".repeat(SHOWN_CHARS)), "x".repeat(SHOWN_CHARS));
        assert_eq!(shown_bytes(&[0xff, b'a']), "\u{fffd}a");
        assert!(shown_bytes(&[b'a'; 100_000]).ends_with("..."));
        assert_eq!(escaped("a\rb"), "a\\rb");
        assert_eq!(escaped("plain.name"), "plain.name");
        assert_eq!(escaped("blk.0.ffn_down.wéight"), "blk.0.ffn_down.wéight");
    }

    /// Right-to-left overrides and zero-width characters could make one name read as another in `gguf ls`:
    /// printed data escapes them as error messages do.
    #[test]
    fn escaped_output_shows_invisible_characters() {
        for (raw, want) in [
            ("evil\u{202e}txt.exe", "evil\\u{202e}txt.exe"),
            ("a\u{200b}b", "a\\u{200b}b"),
            ("a\u{2066}b\u{2069}", "a\\u{2066}b\\u{2069}"),
            ("\u{feff}bom", "\\u{feff}bom"),
            ("soft\u{ad}hyphen", "soft\\u{ad}hyphen"),
        ] {
            assert_eq!(escaped(raw), want, "{raw:?}");
            assert_eq!(shown(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn refuses_what_is_not_a_small_regular_file() {
        let dir = std::env::temp_dir();
        let e = read_capped(&dir, CONFIG_FILE).unwrap_err();
        assert!(
            e.to_string().contains("is a folder, not a regular file"),
            "{e}"
        );
        #[cfg(unix)]
        {
            let e = read_capped(Path::new("/dev/zero"), CONFIG_FILE).unwrap_err();
            assert!(e.to_string().contains("character device"), "{e}");
        }
        let small = InputKind {
            what: "the test file",
            cap: 4,
        };
        let path = dir.join(format!("mmqgen-input-{}", std::process::id()));
        std::fs::write(&path, b"12345").unwrap();
        let e = read_capped(&path, small).unwrap_err();
        assert!(
            e.to_string().contains("5 bytes, over mmqgen's limit of 4"),
            "{e}"
        );
        let (prefix, len) = read_prefix(&path, small).unwrap();
        assert_eq!((prefix.as_slice(), len), (&b"1234"[..], 5));
        std::fs::write(&path, b"1234").unwrap();
        assert_eq!(read_capped(&path, small).unwrap(), b"1234");
        std::fs::remove_file(&path).unwrap();
    }
}
