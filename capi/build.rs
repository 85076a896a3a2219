//! Gives the shared library its soname, so that a program linked against it records `libmmqgen.so` rather than
//! the path it was built at.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmmqgen.so");
}
