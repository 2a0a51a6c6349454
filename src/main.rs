use clap::Parser;

// glibc's allocator spent about a third of R1's CPU time in malloc and free (perf, see
// bench/README.md); mimalloc's per-thread free lists suit a server's many small, short-lived
// allocations.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = souk::cli::Cli::parse();
    match souk::cli::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("souk: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
