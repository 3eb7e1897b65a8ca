// The JVM side of bloomlab-jvm's interoperability checks, run against the real jars
// (Spark's spark-sketch and Guava) by run.sh:
//
//   java Reference gen DIR     build every case's filter with the jars; write DIR/known_answers.txt
//                              (one line per case: digest of the bytes, put results, expected FPP,
//                              answers on the probes) and, for n = 1000, the full bytes.
//   java Reference check DIR   read the files bloomlab-jvm wrote (DIR/cases.txt names them) with
//                              the jars' readFrom; every member must test positive, every probe
//                              must answer as bloomlab-jvm answered, and writeTo must give back
//                              the same bytes.
//
// The keys are generated here and in crates/jvm/tests/common/keys.rs by the same rule; a change
// to one is a change to both.

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.CRC32;

import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;

public final class Reference {
    static final String[] LIBS = {"spark-v1", "spark-v2", "guava", "guava-mitz32"};
    static final String[] KEYS = {"i64", "str", "bytes", "i32"};
    static final long[] NS = {1000, 100000, 10000};
    static final double[] FPPS = {0.03, 0.01, 0.001};
    static final int PROBES = 10000;
    static final long MEMBERS = 1, OTHERS = 2;
    static final int[] ALPHABET = {
        0x61, 0x5A, 0x37, 0x20, 0xE9, 0xDF, 0x20AC, 0x4E2D,
        0x1F600, 0x1D11E, 0x2D, 0xFC, 0x436, 0x2713, 0x7F, 0x7E,
    };

    // ---- keys (same rule as tests/common/keys.rs) ----

    static long mix(long x) {
        long z = x + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static long base(long salt, long i) {
        return mix(salt * 0x100000001B3L + i);
    }

    static Object key(String kind, long salt, long i) {
        long x = base(salt, i);
        boolean special = salt == MEMBERS && i < 4;
        switch (kind) {
            case "i64":
                if (special) return new long[] {Long.MIN_VALUE, -1L, 0L, Long.MAX_VALUE}[(int) i];
                return x;
            case "i32":
                if (special) return new int[] {Integer.MIN_VALUE, -1, 0, Integer.MAX_VALUE}[(int) i];
                return (int) x;
            case "str": {
                if (salt == MEMBERS && i == 0) return "";
                StringBuilder sb = new StringBuilder();
                int len = (int) Long.remainderUnsigned(x, 8);
                for (int c = 0; c < len; c++) {
                    sb.appendCodePoint(ALPHABET[(int) ((x >>> (8 + 4 * c)) & 15)]);
                }
                return sb.append('#').append(i).toString();
            }
            case "bytes": {
                if (salt == MEMBERS && i == 0) return new byte[0];
                int len = (int) Long.remainderUnsigned(x, 23);
                byte[] b = new byte[len];
                for (int j = 0; j < len; j++) b[j] = (byte) (mix(x + j) >>> 56);
                return b;
            }
            default:
                throw new IllegalArgumentException(kind);
        }
    }

    static Object probe(String kind, long n, int j) {
        return j % 2 == 0 ? key(kind, MEMBERS, (j / 2) % n) : key(kind, OTHERS, j);
    }

    // ---- the filters of the jars behind one interface ----

    interface Model {
        boolean put(Object key);
        boolean mightContain(Object key);
        double expectedFpp();
        byte[] bytes() throws IOException;
    }

    static boolean supported(String lib, String kind) {
        return !(lib.startsWith("spark") && kind.equals("i32"));
    }

    static Funnel<?> funnel(String kind) {
        switch (kind) {
            case "i64": return Funnels.longFunnel();
            case "i32": return Funnels.integerFunnel();
            case "str": return Funnels.stringFunnel(StandardCharsets.UTF_8);
            case "bytes": return Funnels.byteArrayFunnel();
            default: throw new IllegalArgumentException(kind);
        }
    }

    static Model spark(org.apache.spark.util.sketch.BloomFilter f) {
        return new Model() {
            public boolean put(Object k) {
                if (k instanceof Long) return f.putLong((Long) k);
                if (k instanceof String) return f.putString((String) k);
                return f.putBinary((byte[]) k);
            }
            public boolean mightContain(Object k) {
                if (k instanceof Long) return f.mightContainLong((Long) k);
                if (k instanceof String) return f.mightContainString((String) k);
                return f.mightContainBinary((byte[]) k);
            }
            public double expectedFpp() { return f.expectedFpp(); }
            public byte[] bytes() throws IOException {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                f.writeTo(out);
                return out.toByteArray();
            }
        };
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static Model guava(com.google.common.hash.BloomFilter f) {
        return new Model() {
            public boolean put(Object k) { return f.put(k); }
            public boolean mightContain(Object k) { return f.mightContain(k); }
            public double expectedFpp() { return f.expectedFpp(); }
            public byte[] bytes() throws IOException {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                f.writeTo(out);
                return out.toByteArray();
            }
        };
    }

    /** Guava's package-private create(funnel, n, fpp, strategy), for MURMUR128_MITZ_32. */
    static com.google.common.hash.BloomFilter<?> guavaWithStrategy(Funnel<?> funnel, long n, double fpp, String strategy)
            throws Exception {
        Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
        Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
        Field constant = strategies.getDeclaredField(strategy);
        constant.setAccessible(true);
        Method create = com.google.common.hash.BloomFilter.class.getDeclaredMethod(
            "create", Funnel.class, long.class, double.class, strategyType);
        create.setAccessible(true);
        return (com.google.common.hash.BloomFilter<?>) create.invoke(null, funnel, n, fpp, constant.get(null));
    }

    static Model create(String lib, String kind, long n, double fpp) throws Exception {
        switch (lib) {
            case "spark-v1":
                return spark(org.apache.spark.util.sketch.BloomFilter.create(
                    org.apache.spark.util.sketch.BloomFilter.Version.V1, n,
                    org.apache.spark.util.sketch.BloomFilter.optimalNumOfBits(n, fpp), 0));
            case "spark-v2":
                // The default path: create(n, fpp) writes V2 with seed 0.
                return spark(org.apache.spark.util.sketch.BloomFilter.create(n, fpp));
            case "guava":
                return guava(com.google.common.hash.BloomFilter.create(funnel(kind), n, fpp));
            case "guava-mitz32":
                return guava(guavaWithStrategy(funnel(kind), n, fpp, "MURMUR128_MITZ_32"));
            default:
                throw new IllegalArgumentException(lib);
        }
    }

    static Model read(String lib, String kind, byte[] bytes) throws IOException {
        if (lib.startsWith("spark")) {
            return spark(org.apache.spark.util.sketch.BloomFilter.readFrom(new ByteArrayInputStream(bytes)));
        }
        return guava(com.google.common.hash.BloomFilter.readFrom(new ByteArrayInputStream(bytes), funnel(kind)));
    }

    static String answers(Model f, String kind, long n) {
        byte[] bits = new byte[(PROBES + 7) / 8];
        for (int j = 0; j < PROBES; j++) {
            if (f.mightContain(probe(kind, n, j))) bits[j / 8] |= (byte) (1 << (j % 8));
        }
        return hex(bits);
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }

    static String pomVersion(String artifact) throws IOException {
        java.util.Properties p = new java.util.Properties();
        try (java.io.InputStream in = Reference.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/" + artifact + "/pom.properties")) {
            if (in == null) return "unknown";
            p.load(in);
        }
        return p.getProperty("version", "unknown");
    }

    // ---- gen ----

    static void gen(Path dir) throws Exception {
        Files.createDirectories(dir);
        List<String> lines = new ArrayList<>();
        lines.add("# lib key n fpp bytes crc32 puts_changed expected_fpp_bits answers(hex, bit j = probe j)");
        lines.add("# spark-sketch " + pomVersion("org.apache.spark/spark-sketch_2.13")
            + ", guava " + pomVersion("com.google.guava/guava"));
        for (String lib : LIBS) {
            for (String kind : KEYS) {
                if (!supported(lib, kind)) continue;
                for (int c = 0; c < NS.length; c++) {
                    long n = NS[c];
                    double fpp = FPPS[c];
                    Model f = create(lib, kind, n, fpp);
                    int changed = 0;
                    for (long i = 0; i < n; i++) if (f.put(key(kind, MEMBERS, i))) changed++;
                    byte[] bytes = f.bytes();
                    if (n == 1000) Files.write(dir.resolve(lib + "-" + kind + "-" + n + ".bin"), bytes);
                    lines.add(String.format(Locale.ROOT, "%s %s %d %s %d %d %d %016x %s", lib, kind, n,
                        Double.toString(fpp), bytes.length, crc(bytes), changed,
                        Double.doubleToRawLongBits(f.expectedFpp()), answers(f, kind, n)));
                }
            }
        }
        Files.write(dir.resolve("known_answers.txt"), lines, StandardCharsets.UTF_8);
        System.out.println("wrote " + (lines.size() - 2) + " cases to " + dir);
    }

    // ---- check ----

    static void check(Path dir) throws Exception {
        int passed = 0, failed = 0;
        for (String line : Files.readAllLines(dir.resolve("cases.txt"), StandardCharsets.UTF_8)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            // file lib key n answers
            String[] p = line.trim().split(" ");
            String file = p[0], lib = p[1], kind = p[2];
            long n = Long.parseLong(p[3]);
            byte[] bytes = Files.readAllBytes(dir.resolve(file));
            List<String> problems = new ArrayList<>();
            try {
                Model f = read(lib, kind, bytes);
                long missed = 0;
                for (long i = 0; i < n; i++) if (!f.mightContain(key(kind, MEMBERS, i))) missed++;
                if (missed != 0) problems.add(missed + " of " + n + " members missed");
                if (!answers(f, kind, n).equals(p[4])) problems.add("probe answers differ");
                if (!java.util.Arrays.equals(f.bytes(), bytes)) problems.add("writeTo gives other bytes");
            } catch (Exception e) {
                problems.add("readFrom failed: " + e);
            }
            if (problems.isEmpty()) {
                passed++;
            } else {
                failed++;
                System.out.println("FAIL " + file + ": " + String.join("; ", problems));
            }
        }
        System.out.println("jvm round trip: " + passed + " passed, " + failed + " failed");
        if (failed != 0 || passed == 0) System.exit(1);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("gen")) {
            gen(Paths.get(args[1]));
        } else if (args.length == 2 && args[0].equals("check")) {
            check(Paths.get(args[1]));
        } else {
            System.err.println("usage: Reference gen DIR | Reference check DIR");
            System.exit(2);
        }
    }
}
