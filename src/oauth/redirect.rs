//! Redirect URI matching (oauth.md): the request's redirect_uri, less the query parameters
//! that the registered URI does not have, must equal a registered URI character for
//! character. The extra parameters travel back to the client.

/// A redirect_uri accepted for a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The registered URI it matched.
    pub registered: String,
    /// The extra query parameters of the request, raw (`name=value`, still encoded).
    pub extras: Vec<String>,
}

impl Redirect {
    /// The address to send the browser back to, with `params` (already encoded) appended
    /// after the registered query and the extras.
    pub fn to_url(&self, params: &[(&str, &str)]) -> String {
        let mut url = self.registered.clone();
        let mut parts: Vec<String> = self.extras.clone();
        parts.extend(params.iter().map(|(name, value)| {
            format!(
                "{name}={}",
                form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>()
            )
        }));
        for part in parts {
            url.push(if url.contains('?') { '&' } else { '?' });
            url.push_str(&part);
        }
        url
    }
}

/// Matches `requested` against the registered URIs; `None` if none fits (or if the extras
/// carry a parameter named `code`, also after a `;`, or the URI has a fragment or a control character: the
/// extras are sent back verbatim in a `Location` header, which cannot hold one).
pub fn match_redirect(requested: &str, registered: &[String]) -> Option<Redirect> {
    if requested.contains('#') || requested.chars().any(char::is_control) {
        return None;
    }
    let (base, query) = split_query(requested);
    let pairs: Vec<&str> = query.map_or(Vec::new(), |q| {
        q.split('&').filter(|p| !p.is_empty()).collect()
    });
    registered.iter().find_map(|candidate| {
        let (candidate_base, candidate_query) = split_query(candidate);
        if candidate_base != base {
            return None;
        }
        let registered_pairs: Vec<&str> = candidate_query.map_or(Vec::new(), |q| {
            q.split('&').filter(|p| !p.is_empty()).collect()
        });
        let registered_names: Vec<String> = registered_pairs.iter().map(|p| name_of(p)).collect();
        let (kept, extras): (Vec<&str>, Vec<&str>) = pairs
            .iter()
            .partition(|pair| registered_names.contains(&name_of(pair)));
        if kept != registered_pairs {
            return None;
        }
        // Some query parsers split pairs on `;` too: `x=1;code=y` carries a code for them.
        if extras
            .iter()
            .any(|pair| pair.split(';').any(|part| name_of(part) == "code"))
        {
            return None;
        }
        Some(Redirect {
            registered: candidate.clone(),
            extras: extras.into_iter().map(str::to_owned).collect(),
        })
    })
}

fn split_query(uri: &str) -> (&str, Option<&str>) {
    match uri.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (uri, None),
    }
}

/// A parameter's name as the client will read it: percent-decoded, so that `c%6Fde` is
/// `code` and `t%65nant` a registered `tenant`.
fn name_of(pair: &str) -> String {
    let raw = pair.split('=').next().unwrap_or(pair);
    form_urlencoded::parse(raw.as_bytes())
        .next()
        .map_or_else(String::new, |(name, _)| name.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered() -> Vec<String> {
        vec![
            "https://app.example/callback".to_owned(),
            "https://app.example/cb?tenant=a".to_owned(),
        ]
    }

    #[test]
    fn exact_and_extras() {
        let r = match_redirect("https://app.example/callback", &registered()).unwrap();
        assert!(r.extras.is_empty());
        let r = match_redirect("https://app.example/callback?x=1&y=a%26b", &registered()).unwrap();
        assert_eq!(r.extras, ["x=1", "y=a%26b"]);
        assert_eq!(
            r.to_url(&[("code", "c d"), ("state", "s&t")]),
            "https://app.example/callback?x=1&y=a%26b&code=c+d&state=s%26t"
        );
        let r = match_redirect("https://app.example/cb?tenant=a&lang=nl", &registered()).unwrap();
        assert_eq!(
            r.to_url(&[("code", "1")]),
            "https://app.example/cb?tenant=a&lang=nl&code=1"
        );
    }

    #[test]
    fn near_misses_fail() {
        for uri in [
            "https://app.example/callback/",
            "https://app.example/Callback",
            "https://app.example:8443/callback",
            "http://app.example/callback",
            "https://app.example/callback#frag",
            "https://app.example/cb?tenant=b",
            "https://app.example/cb",
            "https://app.example/callback?code=stolen",
            "https://app.example/callback?c%6Fde=stolen",
            "https://app.example/callback?%63ode=stolen",
            "https://app.example/cb?tenant=a&t%65nant=b",
            "https://evil.example/callback",
            "https://app.example/callback?x=\0",
            "https://app.example/callback?x=\n",
            "https://app.example/callback?x=\u{7f}",
        ] {
            assert!(match_redirect(uri, &registered()).is_none(), "{uri}");
        }
    }
}
