//! Generates the regionserver's gRPC code from proto/tablet_service.proto (needs
//! `protoc`, Debian's protobuf-compiler).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/tablet_service.proto");
    tonic_prost_build::configure()
        .bytes(".tabula.tablet")
        .compile_protos(&["proto/tablet_service.proto"], &["proto"])?;
    Ok(())
}
