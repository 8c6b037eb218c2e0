"""Pictures in the site, below the browser: what a file's bytes say it is (never its
name), the pixel limit read from the header alone, and the SVG sanitiser."""

from __future__ import annotations

import base64

import pytest

from smevals.checkers import xmlsafe as svgsafe
from smevals.site import pictures
from tools.imagefiles import avif_head, bmp_head, bomb_png, gif_head, jpeg_head, png, webp_head


@pytest.mark.parametrize("head, fmt, size", [
    (png(3, 2), "png", (3, 2)),
    (jpeg_head(640, 480), "jpeg", (640, 480)),
    (jpeg_head(800, 600, app_bytes=60000), "jpeg", (800, 600)),   # the size after EXIF
    (gif_head(32, 16), "gif", (32, 16)),
    (webp_head(1024, 768), "webp", (1024, 768)),
    (bmp_head(10, 20), "bmp", (10, 20)),
    (avif_head(1920, 1080), "avif", (1920, 1080)),
])
def test_the_format_and_size_come_from_the_header(head: bytes, fmt: str,
                                                  size: tuple[int, int]) -> None:
    picture = pictures.inspect(head)
    assert (picture.format, (picture.width, picture.height), picture.refused) == (fmt, size, None)
    assert picture.shown and picture.mime == pictures.MIME[fmt]


def test_a_decompression_bomb_is_refused_from_its_header() -> None:
    bomb = bomb_png()
    assert len(bomb) < 100_000                      # tiny file, 400 million pixels
    picture = pictures.inspect(bomb[:pictures.HEAD_BYTES])
    assert (picture.format, picture.width, picture.height) == ("png", 20000, 20000)
    assert picture.refused == "20,000 × 20,000 pixels, over the limit of 25,000,000"
    assert not picture.shown
    assert pictures.inspect(png(5000, 1)[:40], limit=4999).refused is not None
    assert pictures.inspect(gif_head(5000, 5000)).shown            # exactly at the limit
    assert not pictures.inspect(webp_head(5000, 5001)).shown


@pytest.mark.parametrize("head, why", [
    (b"<html><script>alert(1)</script>", "its bytes are not those of a PNG, JPEG, GIF, WebP, "
                                         "AVIF or BMP picture"),
    (b"", "its bytes are not those of a PNG, JPEG, GIF, WebP, AVIF or BMP picture"),
    (b"\x89PNG\r\n\x1a\n", "no valid PNG header with its size"),
    (png(1, 1)[:16] + b"\x00" * 8, "no valid PNG header with its size"),       # 0 x 0
    (jpeg_head(10, 10, app_bytes=300_000)[:pictures.HEAD_BYTES], "no valid JPEG header with "
                                                                 "its size"),
    (b"\xff\xd8\xff\xd9", "no valid JPEG header with its size"),
    (b"RIFF\x00\x00\x00\x00WEBPVP8Z", "no valid WebP header with its size"),
])
def test_bytes_that_are_no_picture_are_refused(head: bytes, why: str) -> None:
    assert pictures.inspect(head).refused == why


# --- the SVG sanitiser -------------------------------------------------------------------

SVG = 'xmlns="http://www.w3.org/2000/svg"'


def clean(body: str, attrs: str = "") -> str:
    return svgsafe.sanitise(f'<svg {SVG}{attrs}>{body}</svg>'.encode()).decode()


def test_scripts_and_handlers_go_and_the_drawing_stays() -> None:
    out = clean('<script>alert(1)</script><rect width="60" height="60" fill="tomato" '
                'onclick="alert(2)" ONMOUSEOVER="alert(3)"/>', ' width="60" onload="alert(4)"')
    assert out == (f'<svg {SVG} width="60"><rect width="60" height="60" fill="tomato"></rect>'
                   '</svg>')


@pytest.mark.parametrize("body, kept", [
    ('<image href="http://127.0.0.1:9/x.png" width="9" height="9"/>', ""),
    ('<image xmlns:x="http://www.w3.org/1999/xlink" x:href="file:///etc/passwd"/>', ""),
    ('<use href="http://example.com/a.svg#x"/>', "<use></use>"),
    ('<use href="#x"/>', '<use href="#x"></use>'),
    ('<rect fill="url(http://example.com/p.svg#g)" stroke="url(#g)"/>',
     '<rect fill="none" stroke="url(#g)"></rect>'),
    ("<rect style=\"fill: u\\72l(http://example.com/x)\" stroke=\"u\\72l(x)\"/>",
     '<rect stroke="none"></rect>'),
    ('<rect style="background: image-set(\'http://example.com/x.png\' 1x)"/>', "<rect></rect>"),
    ("<style>@import url(http://example.com/x.css); rect { fill: red }</style>", ""),
    ("<style>rect > g { fill: url('#g') }</style>",
     "<style>rect &gt; g { fill: url('#g') }</style>"),
    ('<a href="javascript:alert(1)"><circle r="3"/></a>', '<g><circle r="3"></circle></g>'),
    ('<foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onclick="x">hi</div>'
     '</foreignObject>', ""),
    ('<set attributeName="href" to="javascript:alert(1)"/>', ""),
    ('<animate attributeName="xlink:href" values="javascript:alert(1)"/>', ""),
    ('<animate attributeName="onbegin" values="alert(1)"/>', ""),
    ('<animate attributeName=" HREF " values="javascript:alert(1)"/>', ""),
    ('<animate attributeName="r" values="1;5;1" dur="2s"/>',
     '<animate attributeName="r" values="1;5;1" dur="2s"></animate>'),
    ('<i:x xmlns:i="http://www.inkscape.org/namespaces/inkscape"><rect/></i:x><!-- c -->'
     '<?pi x?>', ""),
    ("<text>a &lt; b &amp; <![CDATA[<c>]]></text>", "<text>a &lt; b &amp; &lt;c&gt;</text>"),
])
def test_nothing_that_refers_outside_is_kept(body: str, kept: str) -> None:
    assert clean(body) == f"<svg {SVG}>{kept}</svg>"


def test_embedded_pictures_are_kept_within_the_pixel_limit() -> None:
    small = "data:image/png;base64," + base64.b64encode(png(2, 2)).decode()
    bomb = "data:image/png;base64," + base64.b64encode(bomb_png()).decode()
    html = "data:image/png;base64," + base64.b64encode(b"<script>x</script>").decode()
    assert clean(f'<image href="{small}"/>') == f'<svg {SVG}><image href="{small}"></image></svg>'
    for href in (bomb, html, "data:image/svg+xml;base64,PHN2Zy8+", "data:text/html,&lt;b&gt;"):
        assert clean(f'<image href="{href}"/>') == f"<svg {SVG}></svg>"


def test_an_external_dtd_is_never_read() -> None:
    """expat reads no file itself; an entity of an external DTD is left out."""
    data = b'<!DOCTYPE svg SYSTEM "file:///etc/passwd"><svg><text>&x;</text></svg>'
    assert svgsafe.sanitise(data) == f"<svg {SVG}><text></text></svg>".encode()


def test_an_svg_without_xmlns_is_drawn_as_svg() -> None:
    assert svgsafe.sanitise(b'<svg width="4"><rect/></svg>') == \
        f'<svg {SVG} width="4"><rect></rect></svg>'.encode()


@pytest.mark.parametrize("data, why", [
    (b'<!DOCTYPE svg [<!ENTITY a "aa"><!ENTITY b "&a;&a;">]><svg>&b;</svg>',
     "the SVG declares or refers to XML entities"),
    (b"<html><script>alert(1)</script></html>",
     "the root element is not <svg> of the SVG namespace"),
    (b'<svg xmlns="http://www.w3.org/1999/xhtml"/>',
     "the root element is not <svg> of the SVG namespace"),
    (b"<svg><rect></svg>", "not well-formed XML: mismatched tag: line 1, column 13"),
    (b"", "not well-formed XML: no element found: line 1, column 0"),
    (b"<svg>" + b" " * svgsafe.MAX_BYTES + b"</svg>", "more than 1,048,576 bytes"),
])
def test_what_cannot_be_sanitised_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(svgsafe.Refused) as refused:
        svgsafe.sanitise(data)
    assert str(refused.value).startswith(why)
