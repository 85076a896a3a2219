//! The `mmqgen` command: the project's catalogue plus variants declared in a TOML file (`--variants`).

fn main() -> std::process::ExitCode {
    mmqgen::cli::main_with(&mmqgen::catalogue::all())
}
