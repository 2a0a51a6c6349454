use clap::Parser;

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
