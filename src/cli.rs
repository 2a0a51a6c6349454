//! The command line: `souk [serve]`, `migrate`, `config`, `categories import`,
//! `locations import`, `client`, `user`, `ads`, `seed`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use serde_json::json;

use crate::accounts;
use crate::app;
use crate::clock::Clock;
use crate::config::Config;
use crate::domain::feature::parse_price_list;
use crate::domain::taxonomy::parse_taxonomy;
use crate::oauth::secret;
use crate::store::{Db, categories, migrations, oauth as oauth_store};
use crate::usecase::features;
use crate::usecase::orders::AmountDiffers;

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
    /// Manage the postcodes behind locations and cityName.
    #[command(subcommand)]
    Locations(LocationsCommand),
    /// Manage OAuth clients (applications).
    #[command(subcommand)]
    Client(ClientCommand),
    /// Manage user accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Moderate advertisements.
    #[command(subcommand)]
    Ads(AdsCommand),
    /// Manage the feature price list.
    #[command(subcommand)]
    Features(FeaturesCommand),
    /// Orders: confirm payments (until a payment provider does).
    #[command(subcommand)]
    Orders(OrdersCommand),
    /// Generate realistic users and online ads (for demos and benchmarks).
    Seed {
        /// How many ads.
        #[arg(long)]
        ads: u64,
        /// How many users share them (default: one per 20 ads).
        #[arg(long)]
        users: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum AdsCommand {
    /// Reject an advertisement; the seller sees the reason.
    Reject {
        item_id: String,
        #[arg(long)]
        reason: String,
    },
    /// Restore a rejected advertisement.
    Restore { item_id: String },
}

#[derive(Debug, Subcommand)]
pub enum OrdersCommand {
    /// Confirm the payment of an order that waits for it (`payment required`) and apply
    /// what it bought, in one transaction; prints the order. `--amount` is the sum received,
    /// in cents: an order whose price is another now (a product added after the buyer
    /// paid) is refused, and nothing changes.
    Pay {
        order_id: i64,
        #[arg(long)]
        amount: i64,
    },
    /// Refuse an order that waits for a payment that did not come: nothing it bought takes
    /// effect, a draft that waited for it waits no more (publishing it makes a new order),
    /// and a renewal of its ads may be bought again; prints the order.
    Refuse { order_id: i64 },
}

#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Register a client; prints {"client_id", "client_secret"} (the secret only this once).
    Create(accounts::ClientSpec),
    /// List the clients (without secrets).
    List,
    /// Delete a client with its tokens.
    Delete { client_id: String },
    /// Replace a client's secret; prints the new one (the old one stops working).
    RotateSecret { client_id: String },
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a confirmed user; prints {"userId": ...}.
    Create(accounts::UserSpec),
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

#[derive(Debug, Subcommand)]
pub enum FeaturesCommand {
    /// Replace the feature price list with a file's (the format of data/features.json); a
    /// file with a mistake is refused with the reason, and then nothing changes.
    Import { file: PathBuf },
}

#[derive(Debug, Subcommand)]
pub enum LocationsCommand {
    /// Add and update postcodes from a file in GeoNames' postal-code text format (tab
    /// separated; the format of data/locations.txt and of GeoNames' NL_full.txt and BE.txt).
    /// Lines of other countries are skipped; a malformed line is refused with its number,
    /// and then nothing changes.
    Import { file: PathBuf },
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
        Command::Client(command) => client_command(&config, command).await,
        Command::Seed { ads, users } => {
            let db = app::prepare_database(&config, &Clock::default()).await?;
            let users = users.unwrap_or(ads / 20 + 1).max(1);
            let blobs = app::open_blobs(&config, &db).await?;
            let till = crate::state::till(&config);
            crate::seed::seed(&db, &blobs, ads, users, till, Clock::default().now()).await
        }
        Command::Ads(command) => {
            let db = app::prepare_database(&config, &Clock::default()).await?;
            let now = Clock::default().now();
            match command {
                AdsCommand::Reject { item_id, reason } => {
                    let item = parse_item(&item_id)?;
                    crate::moderation::reject(&db, item, &reason, now).await?;
                    println!("{item} rejected");
                }
                AdsCommand::Restore { item_id } => {
                    let item = parse_item(&item_id)?;
                    let state = crate::moderation::restore(&db, item, now).await?;
                    println!("{item} restored: {}", state.as_str());
                }
            }
            Ok(())
        }
        Command::Orders(OrdersCommand::Pay { order_id, amount }) => {
            let db = app::prepare_database(&config, &Clock::default()).await?;
            let now = Clock::default().now();
            let paid = db
                .write(move |conn| {
                    Box::pin(crate::usecase::orders::pay(conn, order_id, amount, now))
                })
                .await
                .map_err(|e| match e {
                    crate::usecase::Error::Request(AmountDiffers { due }) => anyhow::anyhow!(
                        "order {order_id} costs {due} cents, not {amount}: nothing changed"
                    ),
                    other => order_refusal(order_id, other),
                })?;
            print_order(&paid);
            Ok(())
        }
        Command::Orders(OrdersCommand::Refuse { order_id }) => {
            let db = app::prepare_database(&config, &Clock::default()).await?;
            let now = Clock::default().now();
            let refused = db
                .write(move |conn| Box::pin(crate::usecase::orders::refuse(conn, order_id, now)))
                .await
                .map_err(|e| order_refusal(order_id, e))?;
            print_order(&refused);
            Ok(())
        }
        Command::User(UserCommand::Create(spec)) => {
            let password = match spec.password_stdin {
                true => Some(first_line_of_stdin()?),
                false => spec.password.clone(),
            };
            let db = app::prepare_database(&config, &Clock::default()).await?;
            let spec = accounts::UserSpec {
                locale: config.region.as_str().to_owned(),
                password,
                ..spec
            };
            let id = accounts::create_user(&db, spec, Clock::default().now()).await?;
            println!("{}", json!({"userId": id}));
            Ok(())
        }
        Command::Locations(LocationsCommand::Import { file }) => {
            let db = app::prepare_database(&config, &Clock::default()).await?;
            println!("{}", crate::locations::import(&db, &file).await?);
            Ok(())
        }
        Command::Features(FeaturesCommand::Import { file }) => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?;
            let list = parse_price_list(&text)
                .map_err(|e| anyhow::anyhow!("{} refused, nothing changed: {e}", file.display()))?;
            let entries = list.entries.len();
            let db = app::prepare_database(&config, &Clock::default()).await?;
            db.write(move |conn| Box::pin(async move { features::import(conn, &list).await }))
                .await?;
            println!("{}: {entries} prices loaded", file.display());
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
                .write(move |conn| {
                    Box::pin(async move { categories::import(conn, &taxonomy, replace, now).await })
                })
                .await
                .map_err(|e| match e {
                    categories::ImportError::Refused(e) => {
                        anyhow::anyhow!("{} refused, nothing changed: {e}", file.display())
                    }
                    categories::ImportError::Db(e) => e.into(),
                })?;
            println!(
                "{}: {} categories added, {} updated, {} closed",
                file.display(),
                summary.inserted,
                summary.updated,
                summary.closed
            );
            if summary.ads_to_reindex > 0 {
                // Ads of moved categories are out of search until this is done; should it
                // fail, the servers' upkeep does it within a minute.
                let ads = app::reindex_search(&db).await?;
                println!("{ads} ads with outdated search terms indexed again");
            }
            Ok(())
        }
    }
}

async fn client_command(config: &Config, command: ClientCommand) -> anyhow::Result<()> {
    let db = app::prepare_database(config, &Clock::default()).await?;
    match command {
        ClientCommand::Create(spec) => {
            let (id, secret) = accounts::create_client(&db, spec, Clock::default().now()).await?;
            println!("{}", json!({"client_id": id, "client_secret": secret}));
        }
        ClientCommand::List => {
            let clients = db.read(|conn| Box::pin(oauth_store::clients(conn))).await?;
            let listed: Vec<_> = clients.iter().map(accounts::client_json).collect();
            println!("{}", serde_json::to_string_pretty(&listed)?);
        }
        ClientCommand::Delete { client_id } => {
            let id = client_id.clone();
            if !db
                .write(move |conn| {
                    Box::pin(async move { oauth_store::delete_client(conn, &id).await })
                })
                .await?
            {
                anyhow::bail!("no client {client_id}");
            }
            println!("client {client_id} deleted");
        }
        ClientCommand::RotateSecret { client_id } => {
            use oauth_store::SecretRotation;
            let new_secret = secret::new_token();
            let (id, hash) = (client_id.clone(), secret::hash(&new_secret));
            let now = Clock::default().now();
            let rotation = db
                .write(move |conn| {
                    Box::pin(async move {
                        oauth_store::rotate_client_secret(conn, &id, &hash, now).await
                    })
                })
                .await?;
            match rotation {
                SecretRotation::Rotated => {}
                SecretRotation::NoSuchClient => anyhow::bail!("no client {client_id}"),
                SecretRotation::Public => {
                    anyhow::bail!("client {client_id} is public: it has no secret to rotate")
                }
            }
            println!(
                "{}",
                json!({"client_id": client_id, "client_secret": new_secret})
            );
        }
    }
    Ok(())
}

/// The first line of standard input, without its line ending (a password piped in, so that
/// it is not on the command line, which anyone on the machine can list).
fn first_line_of_stdin() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| anyhow::anyhow!("cannot read the password from standard input: {e}"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

fn parse_item(text: &str) -> anyhow::Result<crate::domain::advertisement::ItemId> {
    crate::domain::advertisement::ItemId::parse(text)
        .ok_or_else(|| anyhow::anyhow!("`{text}` is not an item id (m followed by digits)"))
}

/// Why an operator's command on order `order_id` changed nothing.
fn order_refusal<R: std::fmt::Debug>(
    order_id: i64,
    error: crate::usecase::Error<R>,
) -> anyhow::Error {
    match error {
        crate::usecase::Error::NotFound(_) => anyhow::anyhow!("there is no order {order_id}"),
        crate::usecase::Error::Purchase(_) => {
            anyhow::anyhow!("order {order_id} is not waiting for a payment")
        }
        other => anyhow::anyhow!("order {order_id}: {other:?}"),
    }
}

/// Prints an order as the operator's commands answer: its id, status and price.
fn print_order(order: &crate::usecase::orders::OrderWithProducts) {
    let (status, price) = (order.order.status.as_str(), order.price());
    println!(
        "{}",
        json!({"orderId": order.order.id, "status": status, "price": price})
    );
}
