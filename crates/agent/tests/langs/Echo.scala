// A Scala bot for the sandbox language test: READY, then echo every line.
object Echo {
  def main(args: Array[String]): Unit = {
    println("READY")
    Console.out.flush()
    Iterator.continually(scala.io.StdIn.readLine()).takeWhile(_ != null).foreach { l =>
      println("ECHO " + l)
      Console.out.flush()
    }
  }
}
