//! `tabula check` over a stopped server's data directory: clean after writes,
//! flushes and an orderly stop (exit 0), and a flipped byte inside an SSTable is
//! reported with the file's name (exit 1).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use tabula_thrift::hbase::THbaseSyncClient;

/// Runs `tabula check --data-dir DIR`: exit success and stdout.
fn check(data: &Path) -> (bool, String) {
    let out = Command::new(binary_path())
        .args(["check", "--data-dir"])
        .arg(data)
        .output()
        .expect("tabula check runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn sstables(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(sstables(&path));
        } else if path.extension().is_some_and(|e| e == "sst") {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn a_stopped_servers_directory_checks_clean_and_damage_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let table = b"checked".to_vec();
    {
        let mut server = Tabula::start_at(&data);
        let mut c = server.client();
        create(&mut c, &table, &["cf"]);
        for i in 0..500 {
            put(
                &mut c,
                &table,
                &format!("row{i:04}"),
                &[("cf:a", &"v".repeat(200))],
            );
        }
        c.major_compact(table.clone()).expect("majorCompact");
        put(&mut c, &table, "after", &[("cf:a", "in the log only")]);
        server.stop();
    }
    let (ok, out) = check(&data);
    assert!(ok, "{out}");
    assert!(out.contains("clean"), "{out}");
    let files = sstables(&data.join("tablets"));
    assert!(!files.is_empty(), "the compaction wrote SSTables");

    // The largest file is the table's: flip a byte in its first half (data blocks).
    let target = files
        .iter()
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .expect("a file")
        .clone();
    let mut bytes = std::fs::read(&target).expect("read");
    let at = bytes.len() / 4;
    bytes[at] ^= 0x20;
    std::fs::write(&target, &bytes).expect("write");
    let (ok, out) = check(&data);
    assert!(!ok, "damage must fail the check: {out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("PROBLEM") && l.contains(&*target.to_string_lossy())),
        "{out}"
    );
}
