//! `tabula serve` with etcd as its lock service (a real etcd, Debian's etcd-server):
//! the coordinator's files live in etcd under the configured namespace, acknowledged
//! writes survive kill -9 of the server, clusters under different namespaces share
//! one etcd without seeing each other, and an unreachable etcd is a clear start-up
//! error.

mod common;
#[path = "../../coordinator/tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use etcd::EtcdServer;
use tabula_coordinator::lock::LockService;
use tabula_thrift::hbase::THbaseSyncClient;

fn on_etcd<'a>(etcd: &'a EtcdServer, namespace: &'a str) -> [(&'a str, &'a str); 2] {
    [
        ("TABULA_ETCD_ENDPOINTS", etcd.url()),
        ("TABULA_ETCD_NAMESPACE", namespace),
    ]
}

#[test]
fn the_catalog_lives_in_etcd_and_acknowledged_writes_survive_kill_9() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let table = b"on_etcd".to_vec();
    {
        let mut server = Tabula::start_at_with(&data, &on_etcd(&etcd, "/cluster1"));
        let mut c = server.client();
        create(&mut c, &table, &["cf"]);
        for i in 0..300 {
            put(
                &mut c,
                &table,
                &format!("row{i:04}"),
                &[("cf:a", &format!("v{i}"))],
            );
        }
        let n = c
            .atomic_increment(table.clone(), b"counter".to_vec(), b"cf:n".to_vec(), 7)
            .expect("atomicIncrement");
        assert_eq!(n, 7);
        server.kill9();
    }
    // The coordinator's state went to etcd, under the namespace, not to the data
    // directory.
    assert!(!data.join("lock").exists());
    let lock = etcd.service("/cluster1");
    let tables: Vec<String> = lock
        .list("/tabula/tables/")
        .expect("list")
        .files
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    assert!(tables[0].contains("on_etcd"), "{tables:?}");
    assert!(lock.get("/tabula/root").expect("get").is_some());

    // A restart waits out the dead server's lease on the coordinator lock.
    let started = Instant::now();
    let server = Tabula::start_at_with(&data, &on_etcd(&etcd, "/cluster1"));
    assert!(started.elapsed() < Duration::from_secs(60));
    let mut c = server.client();
    let rows = c
        .scanner_open(
            table.clone(),
            Vec::new(),
            vec![b"cf:a".to_vec()],
            no_attrs(),
        )
        .and_then(|id| {
            let rows = c.scanner_get_list(id, 1000)?;
            c.scanner_close(id)?;
            Ok(rows)
        })
        .expect("scan");
    assert_eq!(rows.len(), 300);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            text(row.row.as_deref().unwrap_or_default()),
            format!("row{i:04}")
        );
        assert_eq!(columns_of(row)["cf:a"], format!("v{i}"));
    }
    let n = c
        .atomic_increment(table.clone(), b"counter".to_vec(), b"cf:n".to_vec(), 1)
        .expect("atomicIncrement");
    assert_eq!(n, 8);
}

#[test]
fn clusters_under_different_namespaces_share_one_etcd() {
    let etcd = EtcdServer::start();
    let a = Tabula::start_with(&on_etcd(&etcd, "/a"));
    let b = Tabula::start_with(&on_etcd(&etcd, "/b"));
    let (mut ca, mut cb) = (a.client(), b.client());
    create(&mut ca, b"same_name", &["cf"]);
    create(&mut cb, b"same_name", &["cf"]);
    create(&mut cb, b"only_b", &["cf"]);
    put(&mut ca, b"same_name", "r", &[("cf:x", "from a")]);
    put(&mut cb, b"same_name", "r", &[("cf:x", "from b")]);
    let names = |c: &mut Client| -> Vec<String> {
        c.get_table_names()
            .expect("getTableNames")
            .iter()
            .map(|n| text(n))
            .collect()
    };
    assert_eq!(names(&mut ca), ["same_name"]);
    assert_eq!(names(&mut cb), ["only_b", "same_name"]);
    let row = |c: &mut Client| {
        let rows = c
            .get_row(b"same_name".to_vec(), b"r".to_vec(), no_attrs())
            .expect("getRow");
        columns_of(&rows[0])["cf:x"].clone()
    };
    assert_eq!(row(&mut ca), "from a");
    assert_eq!(row(&mut cb), "from b");
}

#[test]
fn an_unreachable_etcd_stops_start_up_with_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let output = Command::new(binary_path())
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--listen", "127.0.0.1:0"])
        .args(["--etcd-endpoints", &format!("http://127.0.0.1:{port}")])
        .env("TABULA_THRIFT2_LISTEN", "127.0.0.1:0")
        .stdin(Stdio::null())
        .output()
        .expect("run tabula");
    assert!(!output.status.success());
    assert!(started.elapsed() < Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("etcd") && stderr.contains("unreachable"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("tabula ready"));
}

#[test]
fn a_standby_coordinator_takes_over_when_the_active_one_dies() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, data2) = data_dir_with_second_name(dir.path());
    let url = etcd.url().to_owned();
    let active = Tabula::start_at_with(&data, &[("TABULA_ETCD_ENDPOINTS", &url)]);
    let mut c = active.client();
    create(&mut c, b"taken_over", &["cf"]);
    for i in 0..100 {
        put(
            &mut c,
            b"taken_over",
            &format!("row{i:03}"),
            &[("cf:a", &format!("v{i}"))],
        );
    }

    // The standby is started here (a test server dies with the thread that
    // started it) and waits; a helper kills the active server once it stands by.
    let killer = kill_when_standby_waits(active, data2.with_extension("log"));
    let standby = Tabula::start_at_with(
        &data2,
        &[("TABULA_ETCD_ENDPOINTS", &url), ("TABULA_STANDBY", "true")],
    );
    killer.join().expect("the active server was killed");
    assert!(standby.log().contains("the standby coordinator took over"));
    let mut c = standby.client();
    for i in 0..100 {
        let rows = c
            .get_row(
                b"taken_over".to_vec(),
                format!("row{i:03}").into_bytes(),
                no_attrs(),
            )
            .expect("getRow");
        assert_eq!(columns_of(&rows[0])["cf:a"], format!("v{i}"), "row{i:03}");
    }
    put(&mut c, b"taken_over", "after", &[("cf:a", "x")]);
}
