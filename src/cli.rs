//! The command line: `souk [serve]`, `migrate`, `config`, `categories import`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::app;
use crate::clock::Clock;
use crate::config::Config;
use crate::domain::category::parse_taxonomy;
use crate::store::{Db, categories, migrations};

#[derive(Debug, Parser)]
#[command(
    name = "souk",
    version,
    about = "The Souk classifieds marketplace API server"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (what a bare `souk` does).
    Serve,
    /// Apply the database migrations and exit.
    Migrate,
    /// Print the effective configuration (secrets redacted).
    Config,
    /// Manage the category taxonomy.
    #[command(subcommand)]
    Categories(CategoriesCommand),
}

#[derive(Debug, Subcommand)]
pub enum CategoriesCommand {
    /// Add and update categories from a taxonomy file (the format of data/categories.json).
    Import {
        file: PathBuf,
        /// Close every stored category that the file does not name.
        #[arg(long)]
        replace: bool,
    },
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = Config::load()?;
    crate::telemetry::init(config.log_format);
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => app::serve(config).await,
        Command::Migrate => {
            let db = Db::open(&config.database_url, &app::db_options(&config)).await?;
            let applied = migrations::run(&db).await?;
            println!(
                "{applied} migration(s) applied; the schema is at version {}",
                migrations::latest_version()
            );
            Ok(())
        }
        Command::Config => {
            print!("{}", config.to_redacted_toml());
            Ok(())
        }
        Command::Categories(CategoriesCommand::Import { file, replace }) => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
            let taxonomy = parse_taxonomy(&text)
                .map_err(|e| anyhow::anyhow!("{} refused, nothing changed: {e}", file.display()))?;
            let db = app::prepare_database(&config, &Clock::default()).await?;
            let now = Clock::default().now();
            let summary = db
                .write(move |conn| categories::import(conn, &taxonomy, replace, now))
                .await?;
            println!(
                "{}: {} categories added, {} updated, {} closed",
                file.display(),
                summary.inserted,
                summary.updated,
                summary.closed
            );
            Ok(())
        }
    }
}
