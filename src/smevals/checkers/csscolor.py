"""A CSS colour (CSS Color 3: a name, `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`,
`rgba()`, `hsl()`, `hsla()`) as the (red, green, blue, alpha) bytes resvg fills a
background with: `render_svg`'s `background` option.

The rules are those of resvg's own colour parser, which the renderer used before (so a
background gives the same PNG bytes as then): numbers round half away from zero and are
clamped to 0-255, percentages of 255, an alpha number of 255; a hue wraps at 360, saturation
and lightness are clamped to 0-100% and converted in single precision; the names are
matched in any case; spaces around the colour and its parts are allowed, and a colour
followed by anything else is refused.
"""

from __future__ import annotations

import math
import re
import struct

RGBA = tuple[int, int, int, int]

_TABLE = (  # the CSS level 3 names, with their colours
    "aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4 azure:f0ffff "
    "beige:f5f5dc bisque:ffe4c4 black:000000 blanchedalmond:ffebcd blue:0000ff "
    "blueviolet:8a2be2 brown:a52a2a burlywood:deb887 cadetblue:5f9ea0 chartreuse:7fff00 "
    "chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed cornsilk:fff8dc crimson:dc143c "
    "cyan:00ffff darkblue:00008b darkcyan:008b8b darkgoldenrod:b8860b darkgray:a9a9a9 "
    "darkgreen:006400 darkgrey:a9a9a9 darkkhaki:bdb76b darkmagenta:8b008b "
    "darkolivegreen:556b2f darkorange:ff8c00 darkorchid:9932cc darkred:8b0000 "
    "darksalmon:e9967a darkseagreen:8fbc8f darkslateblue:483d8b darkslategray:2f4f4f "
    "darkslategrey:2f4f4f darkturquoise:00ced1 darkviolet:9400d3 deeppink:ff1493 "
    "deepskyblue:00bfff dimgray:696969 dimgrey:696969 dodgerblue:1e90ff firebrick:b22222 "
    "floralwhite:fffaf0 forestgreen:228b22 fuchsia:ff00ff gainsboro:dcdcdc "
    "ghostwhite:f8f8ff gold:ffd700 goldenrod:daa520 gray:808080 grey:808080 green:008000 "
    "greenyellow:adff2f honeydew:f0fff0 hotpink:ff69b4 indianred:cd5c5c indigo:4b0082 "
    "ivory:fffff0 khaki:f0e68c lavender:e6e6fa lavenderblush:fff0f5 lawngreen:7cfc00 "
    "lemonchiffon:fffacd lightblue:add8e6 lightcoral:f08080 lightcyan:e0ffff "
    "lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90 lightgrey:d3d3d3 "
    "lightpink:ffb6c1 lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa "
    "lightslategray:778899 lightslategrey:778899 lightsteelblue:b0c4de lightyellow:ffffe0 "
    "lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000 "
    "mediumaquamarine:66cdaa mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db "
    "mediumseagreen:3cb371 mediumslateblue:7b68ee mediumspringgreen:00fa9a "
    "mediumturquoise:48d1cc mediumvioletred:c71585 midnightblue:191970 mintcream:f5fffa "
    "mistyrose:ffe4e1 moccasin:ffe4b5 navajowhite:ffdead navy:000080 oldlace:fdf5e6 "
    "olive:808000 olivedrab:6b8e23 orange:ffa500 orangered:ff4500 orchid:da70d6 "
    "palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee palevioletred:db7093 "
    "papayawhip:ffefd5 peachpuff:ffdab9 peru:cd853f pink:ffc0cb plum:dda0dd "
    "powderblue:b0e0e6 purple:800080 red:ff0000 rosybrown:bc8f8f royalblue:4169e1 "
    "saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee "
    "sienna:a0522d silver:c0c0c0 skyblue:87ceeb slateblue:6a5acd slategray:708090 "
    "slategrey:708090 snow:fffafa springgreen:00ff7f steelblue:4682b4 tan:d2b48c "
    "teal:008080 thistle:d8bfd8 tomato:ff6347 turquoise:40e0d0 violet:ee82ee wheat:f5deb3 "
    "white:ffffff whitesmoke:f5f5f5 yellow:ffff00 yellowgreen:9acd32")
_NAMES = dict(pair.split(":") for pair in _TABLE.split())

_NUMBER = r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(%?)\s*"
_FUNCTION = re.compile(r"\s*(rgba?|hsla?)\(" + _NUMBER + r"(?:,?" + _NUMBER + r")"
                       r"(?:,?" + _NUMBER + r")(?:,?" + _NUMBER + r")?,?\s*\)\s*\Z", re.I)


def parse_color(text: str) -> RGBA | None:
    """The colour's bytes, or None when `text` is not a colour."""
    word = text.strip().lower()
    if word.startswith("#"):
        return _hex(word[1:])
    if word == "transparent":
        return 0, 0, 0, 0
    if word in _NAMES:
        return (*bytes.fromhex(_NAMES[word]), 255)
    found = _FUNCTION.match(text)
    if found is None:
        return None
    kind, *parts = found.groups()
    numbers = [(float(parts[i]), parts[i + 1] == "%") for i in range(0, 8, 2)
               if parts[i] is not None]
    if kind.lower().startswith("rgb"):
        return _rgb(numbers)
    return _hsl(numbers)


def _hex(digits: str) -> RGBA | None:
    if not re.fullmatch(r"[0-9a-f]+", digits) or len(digits) not in (3, 4, 6, 8):
        return None
    if len(digits) < 6:
        digits = "".join(d * 2 for d in digits)
    values = bytes.fromhex(digits)
    return values[0], values[1], values[2], values[3] if len(values) == 4 else 255


def _byte(value: float) -> int:
    """Round half away from zero and clamp to a byte (as a float cast to u8 saturates)."""
    if math.isnan(value):
        return 0
    rounded = math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)
    return max(0, min(255, int(rounded)))


def _rgb(numbers: list[tuple[float, bool]]) -> RGBA | None:
    (first, percent), rest = numbers[0], numbers[1:]
    if percent:
        if any(p for _v, p in rest[2:]):
            return None
        channels = [_byte(first / 100.0 * 255.0)] + [
            _byte((v / 100.0 if p else v) * 255.0) for v, p in rest[:2]]
    else:
        if any(p for _v, p in rest):
            return None
        channels = [_byte(v) for v, _p in numbers[:3]]
    alpha = _byte(rest[2][0] * 255.0) if len(rest) > 2 else 255
    return channels[0], channels[1], channels[2], alpha


def _hsl(numbers: list[tuple[float, bool]]) -> RGBA | None:
    if numbers[0][1] or (len(numbers) > 3 and numbers[3][1]):
        return None
    hue = ((numbers[0][0] % 360.0) + 360.0) % 360.0
    sat, light = (min(1.0, max(0.0, v / 100.0 if p else v)) for v, p in numbers[1:3])
    red, green, blue = _hsl_rgb(_f32(hue) / _f32(60.0), _f32(sat), _f32(light))
    alpha = _byte(numbers[3][0] * 255.0) if len(numbers) > 3 else 255
    return red, green, blue, alpha


def _f32(value: float) -> float:
    """`value` rounded to single precision (each step of the conversion is done in it)."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


def _hsl_rgb(hue: float, sat: float, light: float) -> tuple[int, int, int]:
    high = _f32(light * _f32(sat + 1.0)) if light <= 0.5 else \
        _f32(_f32(light + sat) - _f32(light * sat))
    low = _f32(_f32(light * 2.0) - high)
    return tuple(_byte(_f32(_channel(low, high, _f32(hue + shift)) * 255.0))  # type: ignore
                 for shift in (2.0, 0.0, -2.0))


def _channel(low: float, high: float, hue: float) -> float:
    if hue < 0.0:
        hue = _f32(hue + 6.0)
    if hue >= 6.0:
        hue = _f32(hue - 6.0)
    if hue < 1.0:
        return _f32(_f32(_f32(high - low) * hue) + low)
    if hue < 3.0:
        return high
    if hue < 4.0:
        return _f32(_f32(_f32(high - low) * _f32(4.0 - hue)) + low)
    return low
