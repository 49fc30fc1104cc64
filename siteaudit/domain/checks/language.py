"""Language tags: BCP 47 for `<html lang>`, ISO 639-1 (+ ISO 3166-1 region) for hreflang."""

import re
from typing import Final

_ISO_639_1_CODES = """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de
    dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie
    ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg
    mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro
    ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty
    ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
    """

_ISO_3166_1_CODES = """
    AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV
    BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES
    ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE
    IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY
    MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU
    NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM
    SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE
    VG VI VN VU WF WS YE YT ZA ZM ZW
    """

ISO_639_1: Final = frozenset(_ISO_639_1_CODES.split())
ISO_3166_1_ALPHA_2: Final = frozenset(_ISO_3166_1_CODES.split())

# RFC 5646 "langtag" (well-formedness), case-insensitive; private-use tags (x-...) are accepted whole.
_BCP47: Final = re.compile(
    r"""
    ^(?:
      (?P<language>[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4}|[a-z]{5,8})
      (?:-(?P<script>[a-z]{4}))?
      (?:-(?P<region>[a-z]{2}|[0-9]{3}))?
      (?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*
      (?:-[a-wyz0-9](?:-[a-z0-9]{2,8})+)*
      (?:-x(?:-[a-z0-9]{1,8})+)?
    |x(?:-[a-z0-9]{1,8})+
    )$
    """,
    re.IGNORECASE | re.VERBOSE,
)

# hreflang: ISO 639-1 language, an optional ISO 15924 script (zh-Hant) and an optional region.
_HREFLANG: Final = re.compile(r"^([a-z]{2})(?:-[a-z]{4})?(?:-([a-z]{2}))?$", re.IGNORECASE)


def is_valid_bcp47(tag: str) -> bool:
    """Well-formed BCP 47, with two-letter languages and regions checked against ISO 639-1/3166-1."""
    match = _BCP47.match(tag.strip())
    if match is None:
        return False
    language = match.group("language")
    if language is not None and len(language) == 2 and language.lower() not in ISO_639_1:
        return False
    region = match.group("region")
    return region is None or region.isdigit() or region.upper() in ISO_3166_1_ALPHA_2


def is_valid_hreflang(value: str) -> bool:
    """`x-default`, or an ISO 639-1 language with an optional ISO 3166-1 alpha-2 region (`en`, `en-GB`)."""
    text = value.strip()
    if text.lower() == "x-default":
        return True
    match = _HREFLANG.match(text)
    if match is None:
        return False
    language, region = match.group(1), match.group(2)
    return language.lower() in ISO_639_1 and (region is None or region.upper() in ISO_3166_1_ALPHA_2)


def primary_language(tag: str) -> str:
    """The primary language subtag, lower-cased (`en` for `en-GB`)."""
    return tag.strip().replace("_", "-").split("-", 1)[0].lower()
