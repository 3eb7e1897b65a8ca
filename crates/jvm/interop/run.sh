#!/usr/bin/env bash
# bloomlab-jvm against the real JVM libraries (Spark's spark-sketch jar, Guava's jar).
#
#   crates/jvm/interop/run.sh gen     regenerate crates/jvm/tests/data/ (known answers from the jars)
#   crates/jvm/interop/run.sh check   files written by bloomlab-jvm are read by the jars, which must
#                                     find every member and answer every probe as we do
#   crates/jvm/interop/run.sh fetch   only install the jars (what `.ci/run` does in the background
#                                     while the workspace builds)
#
# Needs java and javac (17+). Guava comes from Debian's libguava-java; Spark's sketch jar from the
# pyspark source archive on PyPI (it carries deps/jars/spark-sketch_*.jar), extracted once into
# $BLOOMLAB_JAR_CACHE (default ~/.cache/bloomlab/jars). If either cannot be installed the script
# fails; it never skips.
set -euo pipefail
cd "$(dirname "$0")/../../.."

PYSPARK_VERSION=4.3.0
SPARK_JAR_NAME="spark-sketch_2.13-${PYSPARK_VERSION}.jar"
CACHE="${BLOOMLAB_JAR_CACHE:-$HOME/.cache/bloomlab/jars}"
mkdir -p "$CACHE"

die() { echo "interop: $*" >&2; exit 1; }

command -v java >/dev/null && command -v javac >/dev/null || die "java and javac are required (apt-get install -y openjdk-17-jdk-headless)"

GUAVA_JAR=/usr/share/java/guava.jar
if [ ! -f "$GUAVA_JAR" ]; then
    echo "interop: installing libguava-java" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libguava-java >/dev/null; } \
        || die "cannot install libguava-java"
    [ -f "$GUAVA_JAR" ] || die "libguava-java installed no $GUAVA_JAR"
fi

SPARK_JAR="$CACHE/$SPARK_JAR_NAME"
if [ ! -f "$SPARK_JAR" ]; then
    echo "interop: fetching pyspark $PYSPARK_VERSION (source archive) for $SPARK_JAR_NAME" >&2
    dl="$(mktemp -d)"
    trap 'rm -rf "$dl"' EXIT
    pip download --quiet --no-deps --no-binary :all: "pyspark==$PYSPARK_VERSION" -d "$dl" \
        || die "cannot download pyspark==$PYSPARK_VERSION from PyPI"
    tar -xzf "$dl/pyspark-$PYSPARK_VERSION.tar.gz" -C "$dl" "pyspark-$PYSPARK_VERSION/deps/jars/$SPARK_JAR_NAME" \
        || die "pyspark-$PYSPARK_VERSION.tar.gz has no deps/jars/$SPARK_JAR_NAME"
    mv "$dl/pyspark-$PYSPARK_VERSION/deps/jars/$SPARK_JAR_NAME" "$SPARK_JAR"
    rm -rf "$dl"
    trap - EXIT
fi

[ "${1:-}" = fetch ] && exit 0

CP="$SPARK_JAR:$GUAVA_JAR"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
javac -nowarn -d "$BUILD/classes" -cp "$CP" crates/jvm/interop/Reference.java
run_java() { java -cp "$BUILD/classes:$CP" Reference "$@"; }

case "${1:-}" in
    gen)
        run_java gen crates/jvm/tests/data
        ;;
    check)
        cargo run --quiet -p bloomlab-jvm --example jvm_interop_write -- "$BUILD/files"
        run_java check "$BUILD/files"
        ;;
    *)
        die "usage: $0 gen|check|fetch"
        ;;
esac
