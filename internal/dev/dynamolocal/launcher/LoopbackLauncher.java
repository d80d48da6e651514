// LoopbackLauncher starts DynamoDB Local as its own main class
// (ServerRunner) does, with the same command line, except that its HTTP
// listener binds one address, 127.0.0.1 unless the system property
// sourcebase.dynamodb.host names another, instead of every interface:
// DynamoDB Local has only -port, and its Jetty server's connector, left
// without a host, listens on *:port. Package dynamolocal compiles this file
// once into its cache and starts it in place of the jar's main class
// (docs/decisions.md, "Local listeners bind loopback").
//
// When DynamoDB Local's internals are not what this expects (a release that
// renamed them), it exits with an error instead of listening everywhere.

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.BindException;

import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import software.amazon.dynamodb.services.local.main.CommandLineInput;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackLauncher {
    private LoopbackLauncher() {}

    public static void main(String[] args) throws Exception {
        String host = System.getProperty("sourcebase.dynamodb.host", "127.0.0.1");
        // As ServerRunner.main: -help (or a command line it rejects) prints
        // the usage and starts nothing.
        if (!new CommandLineInput(args).init()) {
            return;
        }
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Server server;
        try {
            Field f = DynamoDBProxyServer.class.getDeclaredField("server");
            f.setAccessible(true);
            server = (Server) f.get(proxy);
        } catch (ReflectiveOperationException | ClassCastException e) {
            throw fail("no Jetty server in DynamoDBProxyServer.server: " + e);
        }
        Connector[] connectors = server.getConnectors();
        if (connectors.length == 0) {
            throw fail("its Jetty server has no connector");
        }
        for (Connector c : connectors) {
            if (!(c instanceof ServerConnector)) {
                throw fail("its Jetty connector is a " + c.getClass().getName() + ", not a ServerConnector");
            }
            ((ServerConnector) c).setHost(host);
        }
        try {
            proxy.start();
        } catch (IOException e) {
            if (!(e.getCause() instanceof BindException)) {
                throw e;
            }
            // Told apart by package dynamolocal, which then tries another port.
            System.err.println("LoopbackLauncher: cannot listen on " + host + ":" + proxyPort(connectors) + ": " + e.getCause().getMessage());
            System.exit(1);
        }
    }

    private static int proxyPort(Connector[] connectors) {
        return ((ServerConnector) connectors[0]).getPort();
    }

    private static IllegalStateException fail(String why) {
        System.err.println("LoopbackLauncher: cannot bind DynamoDB Local to one address, so it is not started: " + why);
        System.exit(2);
        return new IllegalStateException(why);
    }
}
