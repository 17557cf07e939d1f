import java.io.*;
public class Echo {
  public static void main(String[] a) throws Exception {
    BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
    System.out.println("READY " + Runtime.getRuntime().availableProcessors() + " " + Runtime.getRuntime().maxMemory());
    System.out.flush();
    String l; while ((l = r.readLine()) != null) { System.out.println("ECHO " + l); System.out.flush(); }
  }
}
