#!/usr/bin/env bash
# Writes Fixtures/sniffing/: small real files of each type the MIME Sniffing table knows, made by the tools that
# make such files (ImageMagick, ffmpeg, zip, gzip, qpdf, groff, fontTools), and hand-written markup and polyglots.
# MediaTypeSniffingTests reads them; they are committed, so that the tests read the same bytes on every machine.
# Needs: apt-get install imagemagick ffmpeg zip qpdf groff-base fonts-dejavu-core fonts-urw-base35 python3-venv
# Regenerate only when a case is added: another version of a tool writes other bytes of the same type.
set -euo pipefail
out="$(cd "$(dirname "$0")" && pwd)/sniffing"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out"
mkdir -p "$out"
cd "$work"
magick=/usr/bin/convert  # ImageMagick's own, not a stand-in earlier on PATH

# Images: 4x4 pixels each.
$magick -size 4x4 xc:red "$out/image.png"
$magick -size 4x4 xc:red -quality 80 "$out/image.jpg"
$magick -size 4x4 xc:red "$out/image.gif"
$magick -size 4x4 xc:red "$out/image.bmp"
$magick -size 4x4 xc:red "$out/image.webp"
$magick -size 16x16 xc:red "$out/image.ico"
$magick -size 4x4 xc:red "$out/image.tiff"  # not in the table: binary, so application/octet-stream

# Audio and video: a tenth of a second of a tone, a frame or two of a test picture.
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
tone=(-f lavfi -i "sine=frequency=440:duration=0.1")
picture=(-f lavfi -i "testsrc=size=16x16:rate=10:duration=0.2")
ff "${tone[@]}" -b:a 32k "$out/audio-id3.mp3"                                   # with an ID3v2 tag
ff "${tone[@]}" -b:a 32k -id3v2_version 0 -write_xing 0 "$out/audio-no-id3.mp3"  # frames from the first byte
ff "${tone[@]}" -c:a libvorbis "$out/audio.ogg"
ff "${tone[@]}" -ar 8000 "$out/audio.wav"
ff "${tone[@]}" -ar 8000 "$out/audio.aiff"
ff "${tone[@]}" -ar 8000 "$out/audio.flac"  # not in the table: binary, so application/octet-stream
ff "${picture[@]}" -c:v libx264 -pix_fmt yuv420p "$out/video.mp4"
ff "${picture[@]}" -c:v libvpx "$out/video.webm"
ff "${picture[@]}" -c:v mpeg4 "$out/video.avi"
# MIDI: no tool here writes one; the header chunk and one track with an end-of-track event, by the format's layout.
printf 'MThd\x00\x00\x00\x06\x00\x00\x00\x01\x00\x60MTrk\x00\x00\x00\x04\x00\xff\x2f\x00' > "$out/audio.mid"

# Archives and documents.
printf 'sniffing fixture\n' > note.txt
zip -q -X "$out/archive.zip" note.txt
gzip -n -c note.txt > "$out/archive.gz"
qpdf --empty "$out/document.pdf"
printf '.TL\nSniffing\n' | groff -T ps > "$out/document.ps"

# Fonts: one glyph of DejaVu Sans (TrueType) and of URW's Nimbus Sans (OpenType, CFF), as TTF, OTF, WOFF, WOFF2
# and a TrueType collection.
python3 -m venv venv
venv/bin/pip install -q fonttools==4.55.3 brotli==1.1.0
subset() { venv/bin/pyftsubset "$1" --text=A --output-file="$2" ${3:+--flavor=$3}; }
subset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$out/font.ttf"
subset /usr/share/fonts/opentype/urw-base35/NimbusSans-Regular.otf "$out/font.otf"
subset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$out/font.woff" woff
subset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$out/font.woff2" woff2
venv/bin/python - "$out" <<'EOF'
import sys
from fontTools.ttLib import TTFont
from fontTools.ttLib.ttCollection import TTCollection
collection = TTCollection()
collection.fonts = [TTFont(f"{sys.argv[1]}/font.ttf"), TTFont(f"{sys.argv[1]}/font.ttf")]
collection.save(f"{sys.argv[1]}/font.ttc")
EOF

# Markup, each a way to write it, and text.
printf '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n' > "$out/markup.svg"
printf '<?xml version="1.0" encoding="UTF-8"?>\n<!-- a drawing -->\n<svg xmlns="http://www.w3.org/2000/svg"/>\n' \
  > "$out/markup-prolog.svg"
printf '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg/>\n' \
  > "$out/markup-doctype.svg"
printf '<?xml version="1.0"?>\n<note><to>you</to></note>\n' > "$out/markup.xml"
printf '<!DOCTYPE html>\n<html><body><script>alert(1)</script></body></html>\n' > "$out/markup.html"
printf ' \r\n\t<ScRiPt>alert(1)</ScRiPt>\n' > "$out/markup-script.html"
printf '<!-- a comment --><p>hi</p>\n' > "$out/markup-comment.html"
printf 'name,size\nsun.png,300000\n' > "$out/text.csv"

# Polyglots: markup that says it is an image, and images that carry markup after their signature.
cp "$out/markup.svg" "$out/polyglot-svg-named.png"
cp "$out/markup.html" "$out/polyglot-html-named.png"
{ cat "$out/image.png"; printf '<html><script>alert(1)</script></html>\n'; } > "$out/polyglot-png-html-tail.png"
{ cat "$out/image.gif"; cat "$out/archive.zip"; } > "$out/polyglot-gif-zip.gif"
ls -l "$out"
