//! Generates the coordinator's admin gRPC code from proto/admin_service.proto
//! (needs `protoc`, Debian's protobuf-compiler).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/admin_service.proto");
    tonic_prost_build::configure()
        .bytes(".tabula.admin")
        .compile_protos(&["proto/admin_service.proto"], &["proto"])?;
    Ok(())
}
