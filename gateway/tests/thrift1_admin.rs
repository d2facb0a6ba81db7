//! Thrift1 administration calls against the real `tabula` binary: table lifecycle,
//! column descriptors, regions, compactions, cluster identity and grants, with
//! HBase's answers for every error case.

mod common;

use common::*;
use tabula_thrift::hbase::{
    ColumnDescriptor, TAccessControlEntity, THbaseSyncClient, TPermissionScope, TThriftServerType,
};

#[test]
fn created_tables_are_listed_as_enabled() {
    let (mut c, name) = fresh_table("admin_list", &["cf"]);
    assert!(c.get_table_names().unwrap().contains(&name));
    let with_state = c.get_table_names_with_is_table_enabled().unwrap();
    assert_eq!(with_state.get(&name), Some(&true));
    assert!(c.is_table_enabled(name.clone()).unwrap());
    assert!(
        !c.get_table_names()
            .unwrap()
            .iter()
            .any(|n| n.starts_with(b"hbase:")),
        "system tables must not be listed"
    );
}

#[test]
fn creating_an_existing_table_is_already_exists() {
    let (mut c, name) = fresh_table("admin_exists", &["cf"]);
    let e = already_exists(c.create_table(name.clone(), vec![descriptor("other")]));
    assert_eq!(e.message.as_deref(), Some("table name already in use"));
    assert_usable(&mut c);
    let families = c.get_column_descriptors(name).unwrap();
    assert_eq!(
        families.keys().cloned().collect::<Vec<_>>(),
        vec![b"cf:".to_vec()],
        "the table must be unchanged"
    );
}

#[test]
fn a_table_without_families_is_an_io_error() {
    let mut c = shared().client();
    let name = unique("admin_nofam");
    let m = io_message(c.create_table(name.clone(), vec![]));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.DoNotRetryIOException: "),
        "{m}"
    );
    assert!(m.contains("at least one column family"), "{m}");
    assert_usable(&mut c);
    assert!(!c.get_table_names().unwrap().contains(&name));
}

#[test]
fn bad_descriptors_are_illegal_arguments() {
    let mut c = shared().client();
    let name = unique("admin_baddesc");
    let empty = ColumnDescriptor {
        name: Some(Vec::new()),
        ..descriptor("x")
    };
    assert_eq!(
        illegal_argument(c.create_table(name.clone(), vec![empty]))
            .message
            .as_deref(),
        Some("column name is empty")
    );
    assert_usable(&mut c);

    let bad_compression = ColumnDescriptor {
        compression: Some("brotli".into()),
        ..descriptor("cf")
    };
    let m = illegal_argument(c.create_table(name.clone(), vec![bad_compression]))
        .message
        .unwrap_or_default();
    assert!(m.contains("brotli"), "{m}");

    let lower_bloom = ColumnDescriptor {
        bloom_filter_type: Some("row".into()),
        ..descriptor("cf")
    };
    let m = illegal_argument(c.create_table(name.clone(), vec![lower_bloom]))
        .message
        .unwrap_or_default();
    assert!(m.contains("row") && m.contains("ROWCOL"), "{m}");

    let negative_versions = ColumnDescriptor {
        max_versions: Some(-1),
        ..descriptor("cf")
    };
    let m = illegal_argument(c.create_table(name.clone(), vec![negative_versions]))
        .message
        .unwrap_or_default();
    assert!(m.contains("Maximum versions must be positive"), "{m}");

    let twice = vec![
        descriptor("cf"),
        ColumnDescriptor {
            name: Some(b"cf".to_vec()),
            ..descriptor("cf")
        },
    ];
    let m = illegal_argument(c.create_table(name.clone(), twice))
        .message
        .unwrap_or_default();
    assert!(m.contains("cf") && m.contains("already exists"), "{m}");

    assert_usable(&mut c);
    assert!(
        !c.get_table_names().unwrap().contains(&name),
        "no failed createTable may create the table"
    );
}

#[test]
fn column_descriptors_report_what_was_created() {
    let mut c = shared().client();
    let name = unique("admin_desc");
    let tuned = ColumnDescriptor::new(
        b"cf2".to_vec(),
        5,
        "gz".to_string(),
        true,
        "ROWCOL".to_string(),
        1000,
        4,
        true,
        3600,
    );
    c.create_table(name.clone(), vec![descriptor("cf1"), tuned])
        .unwrap();
    let d = c.get_column_descriptors(name).unwrap();
    assert_eq!(
        d.keys().cloned().collect::<Vec<_>>(),
        vec![b"cf1:".to_vec(), b"cf2:".to_vec()]
    );

    let cf1 = &d[&b"cf1:".to_vec()];
    assert_eq!(cf1.name.as_deref(), Some(&b"cf1:"[..]));
    assert_eq!(cf1.max_versions, Some(3));
    assert_eq!(cf1.compression.as_deref(), Some("NONE"));
    assert_eq!(cf1.in_memory, Some(false));
    assert_eq!(cf1.bloom_filter_type.as_deref(), Some("NONE"));
    assert_eq!(cf1.bloom_filter_vector_size, Some(0));
    assert_eq!(cf1.bloom_filter_nb_hashes, Some(0));
    assert_eq!(
        cf1.block_cache_enabled,
        Some(false),
        "the Thrift1 IDL default is block cache off"
    );
    assert_eq!(
        cf1.time_to_live,
        Some(2147483647),
        "happybase's -1 means forever"
    );

    let cf2 = &d[&b"cf2:".to_vec()];
    assert_eq!(cf2.max_versions, Some(5));
    assert_eq!(
        cf2.compression.as_deref(),
        Some("GZ"),
        "stored as zstd, reported by the name given, as HBase spells it"
    );
    assert_eq!(cf2.in_memory, Some(true));
    assert_eq!(cf2.bloom_filter_type.as_deref(), Some("ROWCOL"));
    assert_eq!(cf2.block_cache_enabled, Some(true));
    assert_eq!(cf2.time_to_live, Some(3600));
}

#[test]
fn max_versions_from_the_descriptor_limits_reads() {
    let mut c = shared().client();
    let name = unique("admin_versions");
    let two = ColumnDescriptor {
        max_versions: Some(2),
        ..descriptor("cf")
    };
    c.create_table(name.clone(), vec![two]).unwrap();
    for ts in [1, 2, 3] {
        put_ts(&mut c, &name, "r", &[("cf:a", &format!("v{ts}"))], ts);
    }
    let cells = c
        .get_ver(name, b"r".to_vec(), b"cf:a".to_vec(), 10, no_attrs())
        .unwrap();
    assert_eq!(cells_of(&cells), vec![("v3".into(), 3), ("v2".into(), 2)]);
}

#[test]
fn missing_tables_are_table_not_found() {
    let mut c = shared().client();
    let name = unique("admin_missing");
    let shown = text(&name);
    for (what, r) in [
        (
            "getColumnDescriptors",
            c.get_column_descriptors(name.clone()).map(|_| ()),
        ),
        (
            "isTableEnabled",
            c.is_table_enabled(name.clone()).map(|_| ()),
        ),
        ("enableTable", c.enable_table(name.clone())),
        ("disableTable", c.disable_table(name.clone())),
    ] {
        let e = io_error(r);
        assert_eq!(
            e.message.as_deref(),
            Some(format!("org.apache.hadoop.hbase.TableNotFoundException: {shown}").as_str()),
            "{what}"
        );
        assert_eq!(e.can_retry, Some(false), "{what}");
        assert_usable(&mut c);
    }
    let m = io_message(c.delete_table(name.clone()));
    assert!(
        m.starts_with("java.io.IOException: table does not exist"),
        "{m}"
    );
    assert_usable(&mut c);
}

#[test]
fn disable_and_enable_change_state_and_guard_data_calls() {
    let (mut c, name) = fresh_table("admin_state", &["cf"]);
    put(&mut c, &name, "r", &[("cf:a", "1")]);
    c.disable_table(name.clone()).unwrap();
    assert!(!c.is_table_enabled(name.clone()).unwrap());
    assert_eq!(
        c.get_table_names_with_is_table_enabled()
            .unwrap()
            .get(&name),
        Some(&false)
    );

    let m = io_message(c.get(name.clone(), b"r".to_vec(), b"cf:a".to_vec(), no_attrs()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotEnabledException: "),
        "{m}"
    );
    let m = io_message(c.disable_table(name.clone()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotEnabledException: "),
        "{m}"
    );
    assert_usable(&mut c);

    c.enable_table(name.clone()).unwrap();
    assert!(c.is_table_enabled(name.clone()).unwrap());
    let m = io_message(c.enable_table(name.clone()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotDisabledException: "),
        "{m}"
    );
    let cells = c
        .get(name, b"r".to_vec(), b"cf:a".to_vec(), no_attrs())
        .unwrap();
    assert_eq!(values_of(&cells), vec!["1"], "data survives disable/enable");
}

#[test]
fn delete_table_needs_a_disabled_table() {
    let (mut c, name) = fresh_table("admin_delete", &["cf"]);
    let m = io_message(c.delete_table(name.clone()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotDisabledException: "),
        "{m}"
    );
    assert!(c.get_table_names().unwrap().contains(&name));
    c.disable_table(name.clone()).unwrap();
    c.delete_table(name.clone()).unwrap();
    assert!(!c.get_table_names().unwrap().contains(&name));
    let m = io_message(c.get_column_descriptors(name.clone()));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    // The name can be used again, and the new table is empty.
    create(&mut c, &name, &["cf"]);
    assert!(c
        .get_row(name, b"r".to_vec(), no_attrs())
        .unwrap()
        .is_empty());
}

#[test]
fn an_unsplit_table_has_one_region_spanning_everything() {
    let (mut c, name) = fresh_table("admin_regions", &["cf"]);
    let regions = c.get_table_regions(name.clone()).unwrap();
    assert_eq!(regions.len(), 1);
    let r = &regions[0];
    assert_eq!(r.start_key.as_deref(), Some(&b""[..]));
    assert_eq!(r.end_key.as_deref(), Some(&b""[..]));
    assert_eq!(r.version, Some(1));
    let region_name = r.name.clone().unwrap_or_default();
    assert!(
        region_name.starts_with(&[name.as_slice(), b","].concat()),
        "{}",
        text(&region_name)
    );
    assert!(r.port.unwrap_or(0) > 0);
    assert!(!r.server_name.clone().unwrap_or_default().is_empty());
    assert!(r.id.unwrap_or(0) > 0);
}

#[test]
fn regions_of_a_missing_table_are_empty() {
    let mut c = shared().client();
    assert!(c
        .get_table_regions(unique("admin_noregions"))
        .unwrap()
        .is_empty());
}

#[test]
fn region_info_finds_the_region_of_a_meta_key() {
    let (mut c, name) = fresh_table("admin_regioninfo", &["cf"]);
    let region = c.get_table_regions(name.clone()).unwrap().remove(0);
    let key = [name.as_slice(), b",somerow,99999999999999"].concat();
    let info = c.get_region_info(key).unwrap();
    assert_eq!(info.name, region.name);
    assert_eq!(info.start_key, region.start_key);
    assert_eq!(info.end_key, region.end_key);
    assert_eq!(info.id, region.id);

    let m = io_message(c.get_region_info(b"no-comma-here".to_vec()));
    assert!(
        m.starts_with("java.io.IOException: Cannot find row in hbase:meta"),
        "{m}"
    );
    let m = io_message(c.get_region_info([unique("admin_nometa").as_slice(), b",r,1"].concat()));
    assert!(
        m.starts_with("java.io.IOException: Cannot find row in hbase:meta"),
        "{m}"
    );
    assert_usable(&mut c);
}

#[test]
fn compactions_accept_tables_and_region_names() {
    let (mut c, name) = fresh_table("admin_compact", &["cf"]);
    for i in 0..20 {
        put(
            &mut c,
            &name,
            &format!("r{i:02}"),
            &[("cf:a", &i.to_string())],
        );
    }
    c.compact(name.clone()).unwrap();
    c.major_compact(name.clone()).unwrap();
    let region = c
        .get_table_regions(name.clone())
        .unwrap()
        .remove(0)
        .name
        .unwrap_or_default();
    c.compact(region.clone()).unwrap();
    c.major_compact(region).unwrap();
    let rows = c
        .get_rows(name, vec![b"r00".to_vec(), b"r19".to_vec()], no_attrs())
        .unwrap();
    assert_eq!(rows_of(&rows), vec!["r00", "r19"], "compaction keeps data");

    let m = io_message(c.compact(unique("admin_nocompact")));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    let m = io_message(c.major_compact(unique("admin_nocompact")));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.TableNotFoundException: "),
        "{m}"
    );
    assert_usable(&mut c);
}

#[test]
fn server_type_is_one_and_cluster_id_is_stable() {
    let mut c = shared().client();
    assert_eq!(c.get_thrift_server_type().unwrap(), TThriftServerType::ONE);
    let id = c.get_cluster_id().unwrap();
    assert!(!id.is_empty());
    assert_eq!(shared().client().get_cluster_id().unwrap(), id);
}

#[test]
fn grants_and_revokes_answer_true() {
    let (mut c, name) = fresh_table("admin_grant", &["cf"]);
    let table_scope = TAccessControlEntity::new(
        "alice".into(),
        TPermissionScope::TABLE,
        "RW".into(),
        name.clone(),
        None,
    );
    assert!(c.grant(table_scope.clone()).unwrap());
    assert!(c.revoke(table_scope).unwrap());
    let ns_scope = TAccessControlEntity::new(
        "bob".into(),
        TPermissionScope::NAMESPACE,
        "R".into(),
        None,
        "default".to_string(),
    );
    assert!(c.grant(ns_scope.clone()).unwrap());
    assert!(c.revoke(ns_scope).unwrap());

    let no_table = TAccessControlEntity::new(
        "alice".into(),
        TPermissionScope::TABLE,
        "R".into(),
        None,
        None,
    );
    let m = io_message(c.grant(no_table));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.DoNotRetryIOException: ") && m.contains("tableName"),
        "{m}"
    );
    let bad_action = TAccessControlEntity::new(
        "alice".into(),
        TPermissionScope::TABLE,
        "RZ".into(),
        name,
        None,
    );
    let m = io_message(c.grant(bad_action));
    assert!(m.contains('Z'), "{m}");
    assert_usable(&mut c);
}

#[test]
fn tables_in_a_missing_namespace_cannot_be_created() {
    let mut c = shared().client();
    let ns = text(&unique("nons"));
    let name = format!("{ns}:t").into_bytes();
    let m = io_message(c.create_table(name.clone(), vec![descriptor("cf")]));
    assert!(
        m.starts_with("org.apache.hadoop.hbase.NamespaceNotFoundException: ") && m.contains(&ns),
        "{m}"
    );
    assert_usable(&mut c);
    assert!(!c.get_table_names().unwrap().contains(&name));
}
