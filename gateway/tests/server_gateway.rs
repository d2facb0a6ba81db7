//! A gateway in a process of its own (`tabula gateway`), as HBase runs its Thrift
//! servers: it follows the cluster through etcd, sends rows straight to the
//! regionservers (found through the root and METADATA tablets) and admin calls to
//! the active coordinator's RPC. Everything here goes through real processes and
//! real Thrift over TCP.

mod common;
#[path = "../../coordinator/tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::path::Path;
use std::time::Duration;

use common::t2::{family, table_desc, tname};
use common::*;
use etcd::EtcdServer;
use tabula_thrift::hbase::THbaseSyncClient;
use tabula_thrift::hbase2::{TDurability, TTHBaseServiceSyncClient};

const ROWS: usize = 200;

fn row(i: usize) -> String {
    format!("{}{i:04}", (b'a' + (i % 26) as u8) as char)
}

/// The rows each test writes: row key and value of `cf:v`.
fn test_rows() -> Vec<(String, String)> {
    (0..ROWS).map(|i| (row(i), format!("value{i}"))).collect()
}

fn write_rows(c: &mut Client, table: &[u8]) {
    put_rows(c, table, "cf:v", &test_rows());
}

/// Every row written by [`write_rows`] reads back, by get and by scan.
fn check_rows(c: &mut Client, table: &[u8]) -> Result<(), String> {
    rows_hold(c, table, "cf:v", &test_rows())?;
    let id = c
        .scanner_open_with_scan(table.to_vec(), tscan(), no_attrs())
        .map_err(|e| format!("scannerOpen: {e}"))?;
    let scanned = drain(c, id, 64).len();
    if scanned != ROWS {
        return Err(format!("a scan returns {scanned} rows"));
    }
    Ok(())
}

fn table_names(c: &mut Client) -> Vec<String> {
    c.get_table_names()
        .expect("getTableNames")
        .iter()
        .map(|n| text(n))
        .collect()
}

/// etcd and a `tabula serve` on it, sharing `dir`.
fn serve_on_etcd(dir: &Path, etcd: &EtcdServer) -> Tabula {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    Tabula::start_at_with(&data, &[("TABULA_ETCD_ENDPOINTS", etcd.url())])
}

fn gateway(dir: &Path, etcd: &EtcdServer) -> Tabula {
    Tabula::start_gateway(
        &dir.join("gateway"),
        &[("TABULA_ETCD_ENDPOINTS", etcd.url())],
    )
}

#[test]
fn a_gateway_of_its_own_serves_admin_calls_and_rows() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let serve = serve_on_etcd(dir.path(), &etcd);
    let gw = gateway(dir.path(), &etcd);

    // Admin through the gateway: the coordinator creates the table with its splits.
    let mut g2 = gw.client2(Framing::Buffered, Protocol::Binary);
    let splits: Vec<Vec<u8>> = ["g", "n", "t"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    let mut desc = table_desc(b"remote", vec![family("cf", None)]);
    desc.durability = Some(TDurability::ASYNC_WAL);
    g2.create_table(desc, splits)
        .expect("createTable through the gateway");
    // The table's durability went over the coordinator's RPC and comes back from
    // both processes (the gateway's through etcd).
    let mut s2 = serve.client2(Framing::Buffered, Protocol::Binary);
    let stored = s2
        .get_table_descriptor(tname(b"remote"))
        .expect("descriptor");
    assert_eq!(stored.durability, Some(TDurability::ASYNC_WAL));
    wait_for(
        "the gateway seeing the table's durability",
        Duration::from_secs(10),
        || {
            g2.get_table_descriptor(tname(b"remote"))
                .is_ok_and(|d| d.durability == Some(TDurability::ASYNC_WAL))
        },
    );
    let mut g = gw.client();
    assert!(table_names(&mut g).contains(&"remote".to_owned()));
    let regions = g
        .get_table_regions(b"remote".to_vec())
        .expect("getTableRegions");
    assert_eq!(regions.len(), 4, "{regions:?}");
    let again = g2.create_table(table_desc(b"remote", vec![family("cf", None)]), Vec::new());
    assert!(
        matches!(&again, Err(thrift::Error::User(e)) if format!("{e:?}").contains("TIOError")),
        "creating it twice: {again:?}"
    );
    let mut g1 = gw.client();
    let twice = g1.create_table(b"remote".to_vec(), vec![descriptor("cf")]);
    already_exists(twice);

    // Rows through the gateway land on the cluster: the serve process reads them.
    write_rows(&mut g, b"remote");
    check_rows(&mut g, b"remote").expect("rows through the gateway");
    let mut s = serve.client();
    check_rows(&mut s, b"remote").expect("rows through the serve process");

    // A table the serve process creates shows up on the gateway.
    create(&mut s, b"from_serve", &["cf"]);
    put(&mut s, b"from_serve", "r1", &[("cf:a", "1")]);
    wait_for(
        "the gateway seeing a new table",
        Duration::from_secs(10),
        || table_names(&mut g).contains(&"from_serve".to_owned()),
    );
    let rows = g
        .get_row(b"from_serve".to_vec(), b"r1".to_vec(), no_attrs())
        .expect("getRow");
    assert_eq!(columns_of(&rows[0])["cf:a"], "1");

    // Bad input keeps its HBase exception through the remote path.
    let unknown = g.get_row(b"no_such_table".to_vec(), b"r".to_vec(), no_attrs());
    assert!(io_message(unknown).contains("no_such_table"));
    let bad_family = g.mutate_row(
        b"remote".to_vec(),
        b"r".to_vec(),
        vec![put_m("nope:q", b"v")],
        no_attrs(),
    );
    assert!(io_message(bad_family).contains("nope"));

    // Refusals only the coordinator can decide keep their kind over its RPC.
    let enabled = g.delete_table(b"remote".to_vec());
    assert!(io_message(enabled).contains("is enabled"));
    let ghost = g.delete_table(b"ghost".to_vec());
    assert!(io_message(ghost).contains("table does not exist: ghost"));

    // Disable and delete through the gateway: gone everywhere.
    g.disable_table(b"remote".to_vec()).expect("disableTable");
    let disabled = g.get_row(b"remote".to_vec(), row(0).into_bytes(), no_attrs());
    assert!(io_message(disabled).contains("disabled"));
    g.delete_table(b"remote".to_vec()).expect("deleteTable");
    assert!(!table_names(&mut s).contains(&"remote".to_owned()));
    assert!(!table_names(&mut g).contains(&"remote".to_owned()));
}

#[test]
fn a_gateway_follows_a_standby_coordinator_that_takes_over() {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, data2) = data_dir_with_second_name(dir.path());
    let url = etcd.url().to_owned();
    let active = Tabula::start_at_with(&data, &[("TABULA_ETCD_ENDPOINTS", &url)]);
    let gw = gateway(dir.path(), &etcd);
    let mut g = gw.client();
    create(&mut g, b"before", &["cf"]);
    write_rows(&mut g, b"before");

    // The standby is started here (a test server dies with the thread that
    // started it) and waits; a helper kills the active server once it stands by.
    let killer = kill_when_standby_waits(active, data2.with_extension("log"));
    let standby = Tabula::start_at_with(
        &data2,
        &[("TABULA_ETCD_ENDPOINTS", &url), ("TABULA_STANDBY", "true")],
    );
    killer.join().expect("the active server was killed");

    // The gateway finds the rows where the new coordinator put them...
    let mut last = Err(String::new());
    wait_for(
        "every row readable through the gateway",
        Duration::from_secs(60),
        || {
            let mut g = gw.client();
            last = check_rows(&mut g, b"before");
            last.is_ok()
        },
    );
    // ...and sends admin calls to the new coordinator.
    let mut g = gw.client();
    create(&mut g, b"after", &["cf"]);
    write_rows(&mut g, b"after");
    check_rows(&mut g, b"after").expect("a table made after the takeover");
    let mut s = standby.client();
    check_rows(&mut s, b"after").expect("the new coordinator's process reads it");
    assert!(
        gw.log().contains("following the active coordinator"),
        "{}",
        gw.log()
    );
}

#[test]
fn a_gateway_needs_a_started_cluster() {
    let binary = binary_path();
    let refused = std::process::Command::new(&binary)
        .args(["gateway", "--listen", "127.0.0.1:0"])
        .env("TABULA_THRIFT2_LISTEN", "127.0.0.1:0")
        .output()
        .expect("run tabula gateway");
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("etcd_endpoints"), "{stderr}");

    // An etcd no coordinator has used: nothing to follow yet.
    let etcd = EtcdServer::start();
    let empty = std::process::Command::new(&binary)
        .args(["gateway", "--listen", "127.0.0.1:0"])
        .args(["--etcd-endpoints", etcd.url()])
        .env("TABULA_THRIFT2_LISTEN", "127.0.0.1:0")
        .output()
        .expect("run tabula gateway");
    assert!(!empty.status.success());
    let stderr = String::from_utf8_lossy(&empty.stderr);
    assert!(stderr.contains("no coordinator has started"), "{stderr}");
    assert!(!String::from_utf8_lossy(&empty.stdout).contains("ready"));
}
